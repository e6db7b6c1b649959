//! Insertion, and the split that keeps leaves small.

use super::{Entry, QuadTree, quadrant};
use crate::error::Error;
use crate::geom::Aabb;
use crate::key::Key;

impl<T> QuadTree<T> {
    /// Inserts an item and returns its key.
    ///
    /// Items outside the world box are kept and found like any other.
    ///
    /// Inserts into an empty tree (new, cleared or drained) are deferred:
    /// each appends its item, and the first question asked afterwards (a
    /// query, pairs, `nearest`, a ray cast, `nodes`, a snapshot…) builds
    /// the index of them all in bulk, as [`insert_many`](QuadTree::insert_many)
    /// does, or the first other change places them. So the loop of
    /// clearing the tree and inserting every object again each frame costs
    /// about what one bulk build costs. After that first question, inserts
    /// place their items at once again (keeping a run of alternating
    /// inserts and questions linear). The answers, keys and tree are the
    /// same either way.
    ///
    /// The index is built beside the items (about 40 bytes per item more
    /// while the tree waits to be changed). A tree that has been
    /// [`clear`](QuadTree::clear)ed keeps those buffers for its next index,
    /// so that the loop above allocates nothing once warm (with questions
    /// on the calling thread; the `par_` questions build in fresh memory),
    /// until [`shrink_to_fit`](QuadTree::shrink_to_fit) frees them.
    ///
    /// # Panics
    /// When `aabb` is not valid (a NaN or infinite coordinate, or
    /// `min > max`); the message says which. The tree is unchanged then.
    /// [`try_insert`](QuadTree::try_insert) returns the error instead.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = tree.insert(Aabb::new([5.0, 5.0], [6.0, 6.0]), "player");
    /// assert_eq!(tree[k], "player");
    /// // Outside the world: kept and found.
    /// let far = tree.insert(Aabb::new([500.0, 500.0], [501.0, 501.0]), "far");
    /// assert_eq!(tree.query_point([500.5, 500.5]).next(), Some((far, &"far")));
    /// ```
    #[track_caller]
    #[inline]
    pub fn insert(&mut self, aabb: Aabb, value: T) -> Key {
        match self.try_insert(aabb, value) {
            Ok(key) => key,
            Err(e) => refused(&e),
        }
    }

    /// Inserts an item, or says why its box is refused (and changes nothing).
    ///
    /// ```
    /// use quadrat::{Aabb, Error, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let err = tree.try_insert(Aabb::new([3.0, 0.0], [1.0, 1.0]), ()).unwrap_err();
    /// assert_eq!(err, Error::Inverted { axis: 'x', min: 3.0, max: 1.0 });
    /// assert!(tree.is_empty());
    /// ```
    #[inline]
    pub fn try_insert(&mut self, aabb: Aabb, value: T) -> Result<Key, Error> {
        aabb.validate()?;
        if self.defers() {
            return Ok(self.insert_deferred(aabb, value));
        }
        Ok(self.insert_placed(aabb, value))
    }

    /// The rest of [`try_insert`](QuadTree::try_insert) when the insert
    /// is not deferred: the items of a deferred tree whose index a
    /// question built are placed first (`undefer`), then this one. Kept
    /// out of line, with the first deferred insert's setup and the panic,
    /// so that what is left of `insert`, the box's test and a deferred
    /// insert (which the tutorials' loop makes for every object of every
    /// frame), is small enough to be inlined into the caller's loop
    /// (ARCHITECTURE.md, *Deferred inserts*).
    #[inline(never)]
    fn insert_placed(&mut self, aabb: Aabb, value: T) -> Key {
        self.undefer();
        let (key, idx) = self.slab.insert(value, super::NONE, super::NONE);
        self.attach(idx as u32, aabb);
        self.maybe_compact();
        key
    }

    /// `true` when an insert is deferred: into an empty tree, or into a
    /// deferred one whose index no question has built yet. (Once built,
    /// the index is adopted and inserts place their items again, so
    /// alternating inserts and queries never rebuild more than once.)
    fn defers(&self) -> bool {
        if self.deferred {
            self.lazy.get().is_none()
        } else {
            self.slab.len() == 0
        }
    }

    /// Appends an item to a deferred tree (making an empty tree deferred,
    /// from an empty root): its entry goes to the end of `entries`, in
    /// insertion order, and is placed in bulk later (see
    /// `QuadTree::undefer`).
    #[inline]
    fn insert_deferred(&mut self, aabb: Aabb, value: T) -> Key {
        if !self.deferred {
            self.start_deferring();
        }
        let p = self.entries.len() as u32;
        let (key, idx) = self.slab.insert_at(value, p);
        self.entries.push(Entry {
            aabb,
            owner: idx as u32,
            generation: self.slab.slots[idx].generation(),
        });
        key
    }

    /// Makes an empty tree deferred, from an empty root: the first of a
    /// deferred run of inserts, kept out of their way.
    #[cold]
    #[inline(never)]
    fn start_deferring(&mut self) {
        self.reset_nodes();
        self.free_blocks.clear();
        self.entries.clear();
        self.garbage = 0;
        self.deferred = true;
    }

    /// Places slot `owner`'s item with box `b` in the tree: down the centre's
    /// path while a child's loose bounds contain it, counting it in the load
    /// of every node it passes, then splits the leaf it lands in if needed.
    pub(crate) fn attach(&mut self, owner: u32, b: Aabb) {
        debug_assert!(!self.deferred, "attach into a deferred tree");
        let c = b.center();
        let mut n = 0u32;
        loop {
            let node = &self.nodes[n as usize];
            if node.is_leaf() {
                break;
            }
            let child = node.children + quadrant(&self.geo[n as usize].cell, c) as u32;
            if !self.geo[child as usize].loose.contains(&b) {
                break;
            }
            let node = &mut self.nodes[n as usize];
            node.load += 1;
            node.below = node.below.join(&b);
            self.hot[n as usize].sub = node.subtree_bounds();
            n = child;
        }
        if self.nodes[n as usize].is_leaf() && self.leaf_wants_deeper(n, &b) {
            self.nodes[n as usize].load += 1;
        }
        let generation = self.slab.slots[owner as usize].generation();
        self.insert_entry(
            n,
            Entry {
                aabb: b,
                owner,
                generation,
            },
        );
        // A leaf that split has a new subtree; an internal node (a box too
        // large for its children) only a longer run.
        let leaf = self.nodes[n as usize].is_leaf();
        self.split_if_needed(n);
        if leaf {
            self.sync_subtree(n);
        } else {
            self.sync_node(n);
        }
    }

    /// Splits leaf `n` while more than `max_items` of its items fit a child,
    /// then its children likewise. Recursion is bounded by `max_depth`.
    pub(crate) fn split_if_needed(&mut self, n: u32) {
        let node = &self.nodes[n as usize];
        if !node.is_leaf() || node.load <= self.max_items {
            return;
        }
        let first = self.alloc_children(n);
        // Move every item that fits its quadrant's child down, in run order
        // so the children's runs come out sorted; keep the rest in order.
        // The load of `n` (items that fit a child) becomes its count of
        // items below.
        let node = &self.nodes[n as usize];
        let (cell, start, len) = (
            self.geo[n as usize].cell,
            node.start as usize,
            node.len as usize,
        );
        let mut kept = start;
        let mut below = super::EMPTY;
        for p in start..start + len {
            let e = self.entries[p];
            let child = first + quadrant(&cell, e.aabb.center()) as u32;
            if self.geo[child as usize].loose.contains(&e.aabb) {
                below = below.join(&e.aabb);
                if self.leaf_wants_deeper(child, &e.aabb) {
                    self.nodes[child as usize].load += 1;
                }
                self.insert_entry(child, e);
            } else {
                self.entries[kept] = e;
                self.set_pos(kept);
                kept += 1;
            }
        }
        let node = &mut self.nodes[n as usize];
        node.len = (kept - start) as u32;
        node.below = below;
        self.refit(n);
        for q in 0..4 {
            self.split_if_needed(first + q);
        }
    }
}

/// The panic of [`QuadTree::insert`] for a box it refuses, out of the way
/// of the insert itself.
#[cold]
#[inline(never)]
#[track_caller]
fn refused(e: &Error) -> ! {
    panic!("quadrat: invalid box passed to QuadTree::insert: {e}")
}
