//! Steady state allocates nothing: queries, the pair finder, and a
//! clear-and-refill of a tree that has grown to its working size. And a
//! tree built in bulk holds little room it does not use.

use quadrat::scenario::{Layout, Scenario};
use quadrat::{Aabb, Circle, Config, QuadTree, Ray};

use crate::counting::{allocations_during, held_and_peak, held_by};

pub(crate) fn steady_state_allocates_nothing() {
    let s = Scenario::new(Layout::Clustered, 20_000, 11);
    let boxes = s.boxes();
    let mut tree = QuadTree::new(s.world);
    for (i, &b) in boxes.iter().enumerate() {
        tree.insert(b, i);
    }
    // Inserted one by one into an empty tree, the items are placed in bulk
    // by the first question, which allocates the index.
    let mut hits = 0usize;
    let n = allocations_during(|| hits += tree.query_point(boxes[0].center()).count());
    assert!(n > 0, "the first question builds the index");
    let n = allocations_during(|| {
        for &b in boxes.iter().take(2000) {
            hits += tree.query(b.expand(5.0)).count();
            hits += tree.query_circle(Circle::new(b.center(), 7.0)).count();
            hits += tree.query_point(b.center()).count();
        }
        tree.for_each_pair(|_, _| hits += 1);
    });
    assert!(hits > 0);
    assert_eq!(n, 0, "queries and pairs allocated");

    // The pairs into vectors that hold room for them.
    let (mut keys, mut values) = (Vec::new(), Vec::new());
    tree.pairs_into(&mut keys);
    tree.map_pairs_into(&mut values, |a, b| (tree[a], tree[b]));
    assert!(!keys.is_empty() && keys.len() == values.len());
    let n = allocations_during(|| {
        keys.clear();
        tree.pairs_into(&mut keys);
        values.clear();
        tree.map_pairs_into(&mut values, |a, b| (tree[a], tree[b]));
    });
    assert_eq!(n, 0, "pairs_into or map_pairs_into allocated");

    // The other forms documented as allocation-free: ray casts, visitors,
    // `_into` with a warm buffer, pairs between two trees.
    let mut other = QuadTree::new(s.world);
    for &b in boxes.iter().take(500) {
        other.insert(b.translate([1.0, 1.0]), 0usize);
    }
    // Its first question places its items (see above).
    assert!(other.query_point(boxes[0].center()).count() <= 500);
    let mut keys_found = Vec::with_capacity(boxes.len());
    let (mut rays, mut visited, mut with) = (0usize, 0usize, 0usize);
    let n = allocations_during(|| {
        for &b in boxes.iter().take(500) {
            let c = b.center();
            for dir in [[1.0, 0.0], [0.0, -1.0], [0.6, 0.8]] {
                rays += usize::from(tree.raycast(Ray::new(c, dir), 50.0).is_some());
            }
            tree.visit_region(b.expand(3.0), |_, _| {
                visited += 1;
                core::ops::ControlFlow::<()>::Continue(())
            });
            keys_found.clear();
            tree.query_keys_into(b.expand(3.0), &mut keys_found);
            visited += keys_found.len();
        }
        tree.for_each_pair_with(&other, |_, _| with += 1);
    });
    assert!(rays > 0 && visited > 0 && with > 0);
    assert_eq!(
        n, 0,
        "ray casts, visitors, _into forms or pairs_with allocated"
    );

    // What returns a Vec allocates it: `nearest` (which also keeps a heap).
    let n = allocations_during(|| {
        assert_eq!(tree.nearest(boxes[0].center(), 5).len(), 5);
    });
    assert!(n >= 1, "nearest returns a new Vec");

    // A rebuild of a packed tree reuses everything.
    tree.rebuild();
    let n = allocations_during(|| tree.rebuild());
    assert_eq!(n, 0, "rebuilding a packed tree allocated {n} times");

    // The tutorials' loop: clear, insert each, then pairs, whose first walk
    // builds the index. Twice to settle the capacities, then it allocates
    // nothing: the index is built in the buffers of the last one.
    let refill = |tree: &mut QuadTree<usize>| {
        tree.clear();
        for (i, &b) in boxes.iter().enumerate() {
            tree.insert(b, i);
        }
        let mut pairs = 0usize;
        tree.for_each_pair(|_, _| pairs += 1);
        pairs
    };
    for _ in 0..2 {
        refill(&mut tree);
    }
    let mut pairs = 0;
    let n = allocations_during(|| pairs = refill(&mut tree));
    assert!(pairs > 0);
    assert_eq!(n, 0, "clear, refill and pairs allocated");
    tree.validate().unwrap();
    // And the same when the refill is placed by a change instead.
    for _ in 0..2 {
        refill(&mut tree);
        let first = tree.keys().next().unwrap();
        tree.update(first, boxes[1]);
    }
    refill(&mut tree);
    let first = tree.keys().next().unwrap();
    let n = allocations_during(|| {
        tree.update(first, boxes[1]);
    });
    assert_eq!(n, 0, "adopting the index allocated");
    // And when a change places the refill before any question: the
    // entries are ordered in the buffers of the spare index, by slot
    // (after a refill in the same order) or along the Morton curve (after
    // one in another order). Forward and backward refills in turn warm
    // both; then a backward one follows a backward one (the same order),
    // and a forward one follows it (another order).
    let refill_only = |tree: &mut QuadTree<usize>, order: &[usize]| {
        tree.clear();
        let mut first = None;
        for &i in order {
            first.get_or_insert(tree.insert(boxes[i], i));
        }
        first.expect("boxes")
    };
    let forward: Vec<usize> = (0..boxes.len()).collect();
    let backward: Vec<usize> = forward.iter().rev().copied().collect();
    for _ in 0..3 {
        for order in [&forward, &backward] {
            let first = refill_only(&mut tree, order);
            tree.update(first, boxes[1]);
        }
    }
    for (what, order) in [
        ("in the same order", &backward),
        ("in another order", &forward),
    ] {
        let first = refill_only(&mut tree, order);
        let n = allocations_during(|| {
            tree.update(first, boxes[1]);
        });
        assert_eq!(n, 0, "placing a refill {what} for a change allocated");
        tree.validate().unwrap();
    }

    // Moving everything a little, frame after frame, settles too.
    let keys: Vec<_> = tree.keys().collect();
    settles(&mut tree, "a repeated frame", |tree, second| {
        let t: f32 = if second { 0.3 } else { 0.0 };
        for (&k, b) in keys.iter().zip(&boxes) {
            tree.update(k, b.translate([t.sin() * 3.0, t.cos() * 3.0]));
        }
    });

    // `update_all`, when few items leave their node (re-placed one by one,
    // 0.15% here), when more do (placed all at once, 1.1%) and when many
    // do (a rebuild, 6.3%): after warm-up, nothing. (With leaves of 32
    // items, steps of 0.3 moved 0.8% out of their node; with leaves of 64,
    // 0.5%, re-placed one by one.)
    for (name, step) in [
        ("update_all with small steps", 0.05f32),
        ("update_all with medium steps", 0.6),
        ("update_all with large steps", 6.0),
    ] {
        settles(&mut tree, name, |tree, second| {
            let t: f32 = if second { 0.3 } else { 0.0 };
            tree.update_all(|_, &i, _| boxes[i].translate([t.sin() * step, t.cos() * step]));
        });
    }
    // Frames in which every item jumps to another item's place: the
    // rebuild sorts the entries along the Morton curve first, in buffers
    // the tree keeps, so these settle to nothing too.
    settles(&mut tree, "update_all with far jumps", |tree, second| {
        let by = usize::from(second);
        tree.update_all(|_, &i, _| boxes[(i * 7919 + by) % boxes.len()]);
    });
    let _ = Aabb::default();
}

/// Steady state: the same two frames (`frame(tree, false)`, then
/// `frame(tree, true)`) again and again, until every buffer has grown to
/// what they need; then that switch costs nothing, and the tree is valid.
fn settles(
    tree: &mut QuadTree<usize>,
    name: &str,
    mut frame: impl FnMut(&mut QuadTree<usize>, bool),
) {
    for _ in 0..10 {
        frame(tree, false);
        frame(tree, true);
    }
    frame(tree, false);
    let n = allocations_during(|| frame(tree, true));
    tree.validate().unwrap();
    assert_eq!(n, 0, "{name} allocated {n} times");
}

/// A tree built in bulk holds little more than a copy of itself, whose
/// vectors are cloned to their lengths, and, when placed by a change, the
/// scratch its build keeps for the next one (a category byte an item and
/// the nodes' order), which a copy leaves out: the build gives back what growing its node arrays by
/// doubling left spare (at 1M uniform boxes, the tree held 61.3 MB where
/// its copy holds 54.1).
pub(crate) fn bulk_builds_keep_little_spare_room() {
    for layout in [Layout::Uniform, Layout::Clustered] {
        for n in [30_000, 60_000, 200_000] {
            let s = Scenario::new(layout, n, 5);
            let boxes = s.boxes();
            let build = |how: &str| {
                let items = boxes.iter().copied().zip(0u32..);
                let mut tree = QuadTree::new(s.world);
                match how {
                    // Inserted one by one, the items are placed in bulk by
                    // the first change after them.
                    "deferred inserts placed by a change" => {
                        tree.reserve(n);
                        let keys: Vec<_> = items.map(|(b, v)| tree.insert(b, v)).collect();
                        tree.remove(keys[0]);
                    }
                    _ => drop(tree.insert_many(items)),
                }
                tree
            };
            let builds = ["insert_many", "deferred inserts placed by a change"];
            for name in builds {
                let (tree, held) = held_by(|| build(name));
                tree.validate().unwrap();
                let (copy, exact) = held_by(|| tree.clone());
                assert_eq!(copy.len(), tree.len());
                // `insert_many` into a new tree frees its build's scratch.
                let scratch = match name {
                    "insert_many" => 0,
                    _ => (n + tree.nodes().count() * size_of::<u32>()) as isize,
                };
                assert!(
                    held <= exact + exact / 25 + scratch,
                    "{name}, {layout:?}, n = {n}: the tree holds {held} bytes, a copy {exact}"
                );
            }
        }
    }
}

/// A bulk build's peak heap: `insert_many` into an empty tree holds, on
/// top of what the tree holds once built (the slots, their places and the
/// entries), the bare boxes it takes in and the sorted order it gathers
/// the entries by, 20 bytes an item, less the places, 8, which it makes
/// once the boxes are gone; and at the end the keys it returns, 8. The
/// bound allows a byte an item (the build's category bytes, freed when it
/// ends) and 1% of the tree beside the larger of those. With large leaves,
/// so that the nodes take little room. Gathering by the radix sort's
/// 8-byte keys instead of 4-byte indices took 4 bytes an item more, and
/// making the places before the gather 8.
pub(crate) fn bulk_builds_peak_near_what_they_hold() {
    let n = 200_000;
    let s = Scenario::new(Layout::Uniform, n, 9);
    let config = Config {
        max_items: 256,
        ..Config::default()
    };
    let ((tree, keys), held, peak) = held_and_peak(|| {
        let mut tree = QuadTree::with_config(s.world, config);
        let keys = tree.insert_many(s.boxes().into_iter().zip(0u32..));
        (tree, keys)
    });
    assert_eq!(tree.len(), n);
    let keys_bytes = keys.capacity() * size_of::<quadrat::Key>();
    let held = held as usize - keys_bytes;
    // The boxes and the sorted indices, less the places (two `u32`s each).
    let gather = size_of::<Aabb>() + size_of::<u32>() - 2 * size_of::<u32>();
    let bound = held + held / 100 + n * (gather.max(size_of::<quadrat::Key>()) + 1);
    assert!(
        peak <= bound,
        "insert_many: peak {peak} bytes, the tree holds {held} (bound {bound})"
    );
}

/// `shrink_to_fit` leaves a tree holding no more than a copy of itself, and
/// `reserve` lets a tree filled one insert at a time do the same, but for
/// the scratch its rebuild keeps for the next one: without `reserve`, the
/// item arrays grow by doubling.
pub(crate) fn shrink_to_fit_and_reserve_leave_no_spare_room() {
    let s = Scenario::new(Layout::Uniform, 100_000, 9);
    let boxes = s.boxes();
    let held_by_copy = |tree: &QuadTree<u32>| held_by(|| tree.clone()).1;

    // Drained to a tenth, after a refill loop that keeps a spare index.
    let (mut tree, built) = held_by(|| {
        let mut tree = QuadTree::new(s.world);
        for _ in 0..2 {
            tree.clear();
            for (&b, i) in boxes.iter().zip(0u32..) {
                tree.insert(b, i);
            }
            assert!(tree.query_point(boxes[0].center()).count() > 0);
        }
        let keys: Vec<_> = tree.keys().collect();
        for &k in &keys {
            if !k.index().is_multiple_of(10) {
                tree.remove(k);
            }
        }
        tree
    });
    let answers = |tree: &QuadTree<u32>| {
        let mut found: Vec<_> = tree
            .query(s.world)
            .map(|(k, &v)| (k, tree.aabb(k), v))
            .collect();
        found.sort_by_key(|e| e.0);
        (found, tree.pairs().len())
    };
    let before = answers(&tree);
    assert_eq!(before.0.len(), boxes.len() / 10);
    let ((), change) = held_by(|| tree.shrink_to_fit());
    tree.validate().unwrap();
    assert_eq!(answers(&tree), before);
    let exact = held_by_copy(&tree);
    assert!(
        built + change <= exact,
        "after shrink_to_fit: {} bytes, a copy {exact} (it held {built})",
        built + change
    );

    // Filled one insert at a time, with and without `reserve`.
    let fill = |reserve: bool| {
        let mut tree = QuadTree::new(s.world);
        if reserve {
            tree.reserve(boxes.len());
        }
        for (&b, i) in boxes.iter().zip(0u32..) {
            tree.insert(b, i);
        }
        tree.rebuild();
        tree
    };
    let (tree, held) = held_by(|| fill(true));
    let exact = held_by_copy(&tree);
    // The rebuild's scratch, which the tree keeps and a copy leaves out.
    let scratch = (boxes.len() + tree.nodes().count() * size_of::<u32>()) as isize;
    assert!(
        held <= exact + exact / 25 + scratch,
        "reserved: {held} bytes, a copy {exact}"
    );
    // Without `reserve`, the same bound fails: it catches doubling.
    let (tree, held) = held_by(|| fill(false));
    let exact = held_by_copy(&tree);
    assert!(
        held > exact + exact / 25 + scratch,
        "not reserved: {held} bytes, a copy {exact}"
    );
}
