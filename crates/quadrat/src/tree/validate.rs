//! The invariant checker that tests run after every mutation.

use super::{NodeStack, QuadTree, quadrant};
use crate::key::{Place, Slab, Slot};

impl<T> QuadTree<T> {
    /// Checks every structural invariant of the tree and says which one is
    /// broken. Meant for tests (run it after each mutation) and debugging;
    /// it costs O(n · depth).
    ///
    /// Checked: the node geometry follows from the parent, and each cell is
    /// a box inside its parent's cell and its own loose bounds; each node's run
    /// lies within the entry arrays and no two runs overlap; the copy of each
    /// node the searches read is up to date; every item is
    /// stored in the node its box's placement selects, and its slot points
    /// back at it with the same generation; each node's bounds contain its own items and its
    /// children's bounds; each node's load equals its definition; a node has
    /// children exactly when its load exceeds `max_items`; no node is deeper
    /// than `max_depth`; the free lists and counters add up (the slab's
    /// free list holds every vacant slot that is not retired, once, so no
    /// slot is lost to later inserts). For a tree
    /// whose one-by-one inserts are still deferred: every item's slot
    /// points at its entry in insertion order, and, once a question built
    /// their index, that index passes every check above.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// for i in 0..100 {
    ///     tree.insert(Aabb::from_point([i as f32 * 0.1, 5.0]), i);
    ///     tree.validate().unwrap();
    /// }
    /// ```
    pub fn validate(&self) -> Result<(), String> {
        let fail = |what: String| Err(format!("quadrat: broken invariant: {what}"));
        if self.slab.places.len() != self.slab.slots.len() {
            return fail(format!(
                "{} slots but places for {}",
                self.slab.slots.len(),
                self.slab.places.len()
            ));
        }
        self.slab
            .check_lists()
            .or_else(|what| fail(format!("slab: {what}")))?;
        // What a deferred insert relies on (`Slab::insert_at`): the slots
        // of the last clear's list not taken yet are free, each placed at
        // its position in the list.
        let slab = &self.slab;
        let untaken = slab.refill.get(slab.refill_at as usize..).unwrap_or(&[]);
        for (k, &idx) in (slab.refill_at..).zip(untaken) {
            let free = slab.slots.get(idx as usize).is_some_and(|s| !s.is_full());
            if !free || slab.places[idx as usize].pos != k {
                return fail(format!(
                    "slot {idx}, the refill's {k}th, is taken or misplaced"
                ));
            }
        }
        if self.deferred {
            return self.validate_deferred();
        }
        if self.geo.len() != self.nodes.len() {
            return fail(format!(
                "{} nodes but geometry for {}",
                self.nodes.len(),
                self.geo.len()
            ));
        }
        if self.hot.len() != self.nodes.len() {
            return fail(format!(
                "{} nodes but a search copy of {}",
                self.nodes.len(),
                self.hot.len()
            ));
        }
        if self.geo.first() != Some(&super::Geo::root(self.world)) {
            return fail("the root's geometry is not the world's".to_string());
        }
        let mut seen_items = 0usize;
        let mut reserved = 0usize;
        let mut reachable = vec![false; self.nodes.len()];
        let mut runs: Vec<(u32, u32)> = Vec::new();
        let mut stack = NodeStack::with_root();
        // (node, load counted from the items below it)
        let mut below = vec![0u32; self.nodes.len()];
        let mut order = Vec::new();
        while let Some(n) = stack.pop() {
            let (node, geo) = (&self.nodes[n as usize], &self.geo[n as usize]);
            if reachable[n as usize] {
                return fail(format!("node {n} reached twice"));
            }
            reachable[n as usize] = true;
            order.push(n);
            if node.depth > self.config.max_depth {
                return fail(format!("node {n} at depth {} > max_depth", node.depth));
            }
            if self.hot[n as usize] != super::Hot::of(node) {
                return fail(format!(
                    "the search copy of node {n} is stale: {:?} for {:?}",
                    self.hot[n as usize],
                    super::Hot::of(node)
                ));
            }
            if node.len > node.cap || (node.start + node.cap) as usize > self.entries.len() {
                return fail(format!("node {n} run out of bounds"));
            }
            if node.cap == 0 && node.start != 0 {
                return fail(format!(
                    "node {n} reserves nothing but starts at {}",
                    node.start
                ));
            }
            if node.cap > 0 {
                runs.push((node.start, node.start + node.cap));
            }
            reserved += node.cap as usize;
            if !node.is_leaf() {
                let first = node.children;
                if first as usize + 4 > self.nodes.len() || first % 4 != 1 {
                    return fail(format!("node {n} has bad children index {first}"));
                }
                for q in 0..4 {
                    let c = &self.nodes[(first + q) as usize];
                    let g = &self.geo[(first + q) as usize];
                    if c.parent != n {
                        return fail(format!("child {q} of node {n} has parent {}", c.parent));
                    }
                    if !node.below.contains(&c.subtree_bounds()) {
                        return fail(format!("below bounds of node {n} miss child {q}"));
                    }
                    let (cell, loose) = geo.child_geometry(q as usize);
                    if g.cell != cell || g.loose != loose {
                        return fail(format!("child {q} of node {n} has wrong geometry"));
                    }
                    if !g.cell.is_valid()
                        || !geo.cell.contains(&g.cell)
                        || !g.loose.contains(&g.cell)
                    {
                        return fail(format!(
                            "the cell of child {q} of node {n} is not a box inside its parent's \
                             and its own loose bounds"
                        ));
                    }
                    if c.depth != node.depth + 1 || g.edges != geo.child_edges(q as usize) {
                        return fail(format!("child {q} of node {n} has wrong depth or edges"));
                    }
                    stack.push(first + q);
                }
            }
        }
        // The items, once every reachable node has been checked: `locate`
        // below walks down the links, which must be known to be sound
        // first (a forged snapshot could otherwise make it loop or index
        // out of range).
        for &n in &order {
            let node = &self.nodes[n as usize];
            for pos in node.start..node.start + node.len {
                seen_items += 1;
                let owner = self.entries[pos as usize].owner;
                let Some(slot) = self.slab.slots.get(owner as usize) else {
                    return fail(format!("entry {pos} has bad owner {owner}"));
                };
                if !slot.is_full() || self.slab.places[owner as usize] != (Place { node: n, pos }) {
                    return fail(format!(
                        "slot {owner} does not point back at entry {pos} of node {n}"
                    ));
                }
                if self.entries[pos as usize].generation != slot.generation() {
                    return fail(format!("entry {pos} has a stale generation"));
                }
                let b = self.entries[pos as usize].aabb;
                if !node.tight.contains(&b) {
                    return fail(format!("tight bounds of node {n} miss entry {pos}"));
                }
                if pos > node.start && self.entries[pos as usize - 1].aabb.min.x > b.min.x {
                    return fail(format!(
                        "run of node {n} is not sorted by min.x at entry {pos}"
                    ));
                }
                if b.validate().is_err() {
                    return fail(format!("entry {pos} holds an invalid box {b:?}"));
                }
                let at = self.locate(&b);
                if at != n {
                    return fail(format!(
                        "item {owner} with box {b:?} is in node {n}, belongs in {at}"
                    ));
                }
                // Count the item in the load of every strict ancestor.
                let c = b.center();
                let mut m = 0u32;
                while m != n {
                    below[m as usize] += 1;
                    let mm = &self.nodes[m as usize];
                    m = mm.children + quadrant(&self.geo[m as usize].cell, c) as u32;
                }
            }
        }
        for &n in &order {
            let node = &self.nodes[n as usize];
            let expected = if node.is_leaf() {
                let (s, e) = (node.start, node.start + node.len);
                (s..e)
                    .filter(|&p| self.leaf_wants_deeper(n, &self.entries[p as usize].aabb))
                    .count() as u32
            } else {
                below[n as usize]
            };
            if node.load != expected {
                return fail(format!(
                    "node {n} has load {} but should have {expected}",
                    node.load
                ));
            }
            if node.is_leaf() == (node.load > self.max_items) {
                return fail(format!(
                    "node {n} (leaf: {}) has load {} against max_items {}",
                    node.is_leaf(),
                    node.load,
                    self.max_items
                ));
            }
        }
        if seen_items != self.slab.len() {
            return fail(format!(
                "{seen_items} items in nodes, {} in the slab",
                self.slab.len()
            ));
        }
        // That `len` slots are occupied, `Slab::check_lists` checked above.
        runs.sort_unstable();
        if runs.windows(2).any(|w| w[0].1 > w[1].0) {
            return fail("two node runs overlap".into());
        }
        if reserved + self.garbage != self.entries.len() {
            return fail(format!(
                "entries: {reserved} reserved + {} garbage != {}",
                self.garbage,
                self.entries.len()
            ));
        }
        let mut free = self.free_blocks.clone();
        free.sort_unstable();
        free.dedup();
        if free.len() != self.free_blocks.len() {
            return fail("a free block is listed twice".into());
        }
        for &f in &free {
            if (f..f + 4).any(|m| reachable[m as usize] || self.nodes[m as usize].depth != u8::MAX)
            {
                return fail(format!("free block {f} is in use"));
            }
        }
        let live = reachable.iter().filter(|&&r| r).count();
        if live + 4 * free.len() != self.nodes.len() {
            return fail(format!(
                "{live} live nodes + {} free blocks != {} nodes",
                free.len(),
                self.nodes.len()
            ));
        }
        Ok(())
    }

    /// The checks of a deferred tree (see [`validate`](QuadTree::validate)).
    fn validate_deferred(&self) -> Result<(), String> {
        let fail = |what: String| Err(format!("quadrat: broken invariant: {what}"));
        let root = &self.nodes[0];
        if self.nodes.len() != 1
            || !root.is_leaf()
            || root.cap != 0
            || root.load != 0
            || !self.free_blocks.is_empty()
            || self.garbage != 0
        {
            return fail("a deferred tree has nodes or unused entries".into());
        }
        if self.entries.len() != self.slab.len() {
            return fail(format!(
                "{} deferred entries, {} items",
                self.entries.len(),
                self.slab.len()
            ));
        }
        for (p, e) in self.entries.iter().enumerate() {
            let Some(slot) = self.slab.slots.get(e.owner as usize) else {
                return fail(format!("deferred entry {p} has bad owner {}", e.owner));
            };
            let place = self.slab.places[e.owner as usize];
            // Only `pos` is read in a deferred tree (see
            // `Slab::insert_at`).
            if !slot.is_full() || place.pos as usize != p {
                return fail(format!(
                    "slot {} does not point back at deferred entry {p}",
                    e.owner
                ));
            }
            if e.generation != slot.generation() {
                return fail(format!("deferred entry {p} has a stale generation"));
            }
            if e.aabb.validate().is_err() {
                return fail(format!(
                    "deferred entry {p} holds an invalid box {:?}",
                    e.aabb
                ));
            }
        }
        let Some(lazy) = self.lazy.get() else {
            return Ok(());
        };
        // The index, checked as the tree it becomes once adopted: the same
        // items, with each slot pointing into the index.
        let at = super::Ix {
            nodes: &lazy.nodes,
            geo: &lazy.geo,
            hot: &lazy.hot,
            entries: &lazy.entries,
        }
        .places(self.slab.slots.len());
        let slots = self
            .slab
            .slots
            .iter()
            .map(|s| Slot::new(s.value().map(|_| ()), s.generation()))
            .collect();
        let places = (self.slab.slots.iter().zip(&self.slab.places))
            .zip(&at)
            .map(|((s, &place), &(node, pos))| {
                if s.is_full() {
                    Place { node, pos }
                } else {
                    place
                }
            })
            .collect();
        let placed = QuadTree {
            world: self.world,
            config: self.config,
            max_items: self.max_items,
            nodes: lazy.nodes.clone(),
            geo: lazy.geo.clone(),
            hot: lazy.hot.clone(),
            free_blocks: Vec::new(),
            entries: lazy.entries.clone(),
            garbage: 0,
            slab: Slab {
                slots,
                places,
                free_head: self.slab.free_head,
                len: self.slab.len,
                seed: self.slab.seed,
                refill: self.slab.refill.clone(),
                refill_end: self.slab.refill_end,
                refill_at: self.slab.refill_at,
                in_order: self.slab.in_order,
            },
            movers: Vec::new(),
            splits: Vec::new(),
            order: Vec::new(),
            placing: Default::default(),
            #[cfg(feature = "parallel")]
            fresh: Vec::new(),
            dirty: Vec::new(),
            cats: Vec::new(),
            deferred: false,
            lazy: std::sync::OnceLock::new(),
            spare: super::Spare::default(),
            recycles: false,
        };
        placed
            .validate()
            .map_err(|e| format!("{e} (in the index of a deferred tree)"))
    }
}
