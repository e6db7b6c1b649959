//! Snapshots (feature `serde`): a tree serialized at a random point of a
//! random operation sequence and restored must behave exactly as the
//! original from then on: the same keys, the same next keys, the same
//! answers in the same order, and the same state, checked by serializing
//! both along the way. Damaged snapshots are refused or, when what was
//! changed breaks no invariant (a value, a looser bound, an unused entry),
//! restore a tree that answers right and keeps working.

#![cfg(feature = "serde")]

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::support::ops::{random_box, random_op, random_probe};
use crate::support::shapes::{self, Rng};
use crate::support::tree::{Harness, Op, Probe};
use quadrat::{Aabb, Body, CollisionWorld, Config, Filter, Key, Layers, QuadTree, Shape, Vec2};

/// Every answer of the tree to `p`, in the order the tree gives it.
#[allow(clippy::type_complexity)]
fn answers(
    t: &QuadTree<u32>,
    p: &Probe,
) -> (
    Vec<(Key, Aabb, u32)>,
    Vec<(Key, Key)>,
    Vec<Key>,
    Vec<Key>,
    Vec<Key>,
    Vec<(Key, f32)>,
    Vec<(Key, f32)>,
) {
    let mut pairs = Vec::new();
    t.for_each_pair(|a, b| pairs.push((a, b)));
    (
        t.iter().map(|(k, b, v)| (k, b, *v)).collect(),
        pairs,
        t.query(p.area).map(|(k, _)| k).collect(),
        t.query_circle(p.circle).map(|(k, _)| k).collect(),
        t.query_point(p.point).map(|(k, _)| k).collect(),
        if p.point.is_finite() {
            t.nearest(p.point, p.k)
        } else {
            Vec::new()
        },
        t.raycast_all(p.ray, p.max_dist),
    )
}

/// `t` saved and restored through JSON and through postcard (a format
/// without field names, which writes a fixed-size array with no length):
/// both copies must write the original's JSON again. Returns the postcard
/// copy.
fn restore(t: &QuadTree<u32>) -> QuadTree<u32> {
    let json = serde_json::to_string(t).expect("serialize");
    let copy: QuadTree<u32> = serde_json::from_str(&json).expect("restore");
    assert_eq!(
        serde_json::to_string(&copy).unwrap(),
        json,
        "restore is not exact"
    );
    let bytes = postcard::to_allocvec(t).expect("serialize with postcard");
    let copy: QuadTree<u32> = postcard::from_bytes(&bytes).expect("restore with postcard");
    assert_eq!(
        serde_json::to_string(&copy).unwrap(),
        json,
        "restore with postcard is not exact"
    );
    copy
}

/// Random operations; a snapshot at a random step; then the original and
/// the copy take the same operations and must agree on everything.
fn twins(seed: u64, ops: usize) {
    let mut rng = Rng::new(seed);
    let worlds = shapes::extreme_worlds();
    let world = worlds[rng.below(worlds.len() as u64) as usize];
    let config = Config {
        max_items: 1 + rng.below(12) as usize,
        max_depth: rng.below(25) as u8,
        key_seed: rng.next_u64() as u32,
        ..Config::default()
    };
    let mut h = Harness::new(world, config);
    let at = rng.below(ops as u64) as usize;
    let mut twin: Option<Harness> = None;
    for step in 0..ops {
        if step == at {
            twin = Some(h.fork(restore(&h.tree)));
        }
        let op = random_op(&mut rng, world, &h);
        let fail =
            |e: String| -> ! { panic!("seed {seed}, step {step} (snapshot at {at}), {op:?}: {e}") };
        h.apply(&op).unwrap_or_else(|e| fail(e));
        let Some(t) = twin.as_mut() else { continue };
        t.apply(&op)
            .unwrap_or_else(|e| fail(format!("the restored copy: {e}")));
        // The same keys handed out, the same items.
        assert_eq!(
            t.model.live, h.model.live,
            "seed {seed}, step {step}: keys differ"
        );
        if step % 8 == 0 {
            let p = random_probe(&h, &mut rng, world);
            assert_eq!(
                answers(&t.tree, &p),
                answers(&h.tree, &p),
                "seed {seed}, step {step}: answers differ"
            );
            assert_eq!(
                serde_json::to_string(&t.tree).unwrap(),
                serde_json::to_string(&h.tree).unwrap(),
                "seed {seed}, step {step}: states differ"
            );
        }
        if step % 16 == 0 {
            t.check(&random_probe(t, &mut rng, world))
                .unwrap_or_else(|e| fail(format!("the restored copy: {e}")));
        }
    }
}

#[test]
fn a_restored_tree_behaves_as_the_original() {
    for seed in 0..16 {
        twins(seed, 300);
    }
}

#[test]
fn snapshots_of_empty_and_cleared_trees() {
    let world = Aabb::new([0.0, 0.0], [10.0, 10.0]);
    let mut t: QuadTree<u32> = QuadTree::new(world);
    let mut copy = restore(&t);
    assert_eq!(
        copy.insert(Aabb::from_point([1.0, 1.0]), 1),
        t.insert(Aabb::from_point([1.0, 1.0]), 1)
    );
    t.clear();
    let mut copy = restore(&t);
    let k = t.insert(Aabb::from_point([2.0, 2.0]), 2);
    assert_eq!(copy.insert(Aabb::from_point([2.0, 2.0]), 2), k);
}

/// A snapshot carries the order in which the next `clear` hands out slots
/// (the tree's order at the last one): original and copy refill alike,
/// saved with the items waiting to be placed or placed, before or after
/// the clear.
#[test]
fn a_restored_tree_refills_as_the_original() {
    let world = Aabb::new([0.0, 0.0], [100.0, 100.0]);
    let mut rng = Rng::new(17);
    let boxes: Vec<Aabb> = (0..3_000)
        .map(|_| {
            let c = [rng.range(0.0, 100.0), rng.range(0.0, 100.0)];
            Aabb::from_center(c, [0.5, 0.5])
        })
        .collect();
    let fill = |t: &mut QuadTree<u32>| insert_all(t, &boxes);
    let mut t = QuadTree::new(world);
    fill(&mut t);
    let _ = t.pairs();
    t.clear();
    let second = fill(&mut t);
    // The order is the tree's, not the inserts'.
    assert!(second.iter().zip(0..).any(|(k, i)| k.index() != i));
    for placed in [false, true] {
        let mut t = t.clone();
        if placed {
            t.rebuild();
        }
        let mut copy = restore(&t);
        t.clear();
        copy.clear();
        assert_eq!(fill(&mut copy), fill(&mut t), "placed: {placed}");
        let _ = (t.pairs(), copy.pairs());
        t.clear();
        let mut copy = restore(&t);
        assert_eq!(
            fill(&mut copy),
            fill(&mut t),
            "placed: {placed}, saved after the clear"
        );
    }
}

/// A tree emptied by removals and filled again waits with its items in
/// the order of those inserts, which took the freed slots in no order the
/// last clear made: its copy, which knows only that order, and the tree
/// placed (as any change places it) still refill as it does.
#[test]
fn a_tree_refilled_after_removals_refills_as_its_copy() {
    let world = Aabb::new([0.0, 0.0], [100.0, 100.0]);
    let boxes: Vec<Aabb> = (0..40)
        .map(|i| Aabb::from_center([(i * 37 % 100) as f32, (i * 61 % 100) as f32], [2.0, 2.0]))
        .collect();
    let mut t = QuadTree::new(world);
    for k in insert_all(&mut t, &boxes) {
        t.remove(k);
    }
    // Deferred again, in the slots the removals freed (last freed first).
    let keys = insert_all(&mut t, &boxes);
    assert_ne!(keys[0].index(), 0);
    let _ = t.pairs();
    let mut copy = restore(&t);
    let mut placed = t.clone();
    placed.rebuild();
    for tree in [&mut t, &mut copy, &mut placed] {
        tree.clear();
    }
    let keys = insert_all(&mut t, &boxes);
    assert_eq!(insert_all(&mut copy, &boxes), keys);
    assert_eq!(insert_all(&mut placed, &boxes), keys);
}

/// Inserts `boxes` one by one, the n-th with the value n, and returns
/// their keys in that order.
fn insert_all(tree: &mut QuadTree<u32>, boxes: &[Aabb]) -> Vec<Key> {
    boxes
        .iter()
        .zip(0u32..)
        .map(|(b, v)| tree.insert(*b, v))
        .collect()
}

/// Keys stay meaningful across a snapshot: a live key answers in the copy,
/// a removed one does not, and stale keys stay stale after slot reuse.
#[test]
fn keys_survive_a_snapshot() {
    let world = Aabb::new([0.0, 0.0], [100.0, 100.0]);
    let mut t = QuadTree::new(world);
    let keys: Vec<Key> = (0..100)
        .map(|i| t.insert(Aabb::from_point([i as f32, (i * 7 % 100) as f32]), i))
        .collect();
    for k in keys.iter().step_by(2) {
        t.remove(*k);
    }
    let json = serde_json::to_string(&t).unwrap();
    let mut copy: QuadTree<u32> = serde_json::from_str(&json).unwrap();
    for (i, k) in keys.iter().enumerate() {
        assert_eq!(copy.get(*k), t.get(*k));
        assert_eq!(copy.get(*k).is_some(), i % 2 == 1);
    }
    // Reused slots get new generations in both.
    let a = t.insert(Aabb::from_point([5.0, 5.0]), 1000);
    let b = copy.insert(Aabb::from_point([5.0, 5.0]), 1000);
    assert_eq!(a, b);
    assert!(!copy.contains_key(keys[0]) || keys[0] == b);
}

/// Every number in a snapshot, changed one at a time to values that break
/// things (0, 1, the largest, off by one, random): each damaged snapshot is
/// refused with an error, or restores a tree that validates and keeps
/// working through random operations and queries without a panic.
#[test]
fn damaged_snapshots_are_refused_or_harmless() {
    let world = Aabb::new([0.0, 0.0], [64.0, 64.0]);
    let mut rng = Rng::new(7);
    let mut h = Harness::new(
        world,
        Config {
            max_items: 2,
            max_depth: 5,
            ..Config::default()
        },
    );
    for _ in 0..60 {
        let op = random_op(&mut rng, world, &h);
        h.apply(&op).unwrap();
    }
    // Small enough that damaging every number stays quick, whatever the
    // operations built.
    while h.model.live.len() > 12 {
        h.apply(&Op::Remove(12)).unwrap();
    }
    for k in h
        .model
        .live
        .iter()
        .step_by(5)
        .map(|e| e.0)
        .collect::<Vec<_>>()
    {
        h.tree.remove(k);
    }
    let value = serde_json::to_value(&h.tree).unwrap();
    let mut paths = Vec::new();
    numbers(&value, &mut Vec::new(), &mut paths);
    assert!(paths.len() > 500, "only {} numbers", paths.len());
    let (mut refused, mut accepted) = (0, 0);
    for (i, path) in paths.iter().enumerate() {
        for m in 0..3 {
            let mut v = value.clone();
            let Some(new) = damage(at(&mut v, path), i + m, &mut rng) else {
                continue;
            };
            let restored = catch_unwind(AssertUnwindSafe(|| {
                serde_json::from_value::<QuadTree<u32>>(v)
            }))
            .unwrap_or_else(|_| panic!("restoring with {path:?} = {new} panicked"));
            let Ok(mut t) = restored else {
                refused += 1;
                continue;
            };
            accepted += 1;
            t.validate().unwrap();
            // It answers right about what it holds.
            let items: Vec<(Key, Aabb)> = t.iter().map(|(k, b, _)| (k, b)).collect();
            let mut brute = Vec::new();
            for (i, a) in items.iter().enumerate() {
                for b in &items[i + 1..] {
                    if a.1.intersects(&b.1) {
                        brute.push((a.0.min(b.0), a.0.max(b.0)));
                    }
                }
            }
            brute.sort_unstable();
            assert_eq!(
                t.pairs(),
                brute,
                "a snapshot with {path:?} = {new}: wrong pairs"
            );
            let mut r = Rng::new(i as u64);
            let worked = catch_unwind(AssertUnwindSafe(|| {
                let mut keys: Vec<Key> = t.keys().collect();
                for j in 0..40u32 {
                    let b = random_box(&mut r, world, &h);
                    match j % 4 {
                        0 => keys.push(t.insert(b, j)),
                        1 if !keys.is_empty() => {
                            let k = keys.swap_remove(r.below(keys.len() as u64) as usize);
                            t.remove(k);
                        }
                        2 if !keys.is_empty() => {
                            t.update(keys[r.below(keys.len() as u64) as usize], b);
                        }
                        _ => t.rebuild(),
                    }
                    let _ = t.pairs();
                    let _ = t.query(b).count();
                    let _ = t.nearest(b.min, 3);
                    t.validate().unwrap();
                }
            }));
            assert!(
                worked.is_ok(),
                "a snapshot with {path:?} = {new} restored a tree that fails"
            );
        }
    }
    println!("damaged snapshots: {refused} refused, {accepted} restored and working");
    assert!(
        refused > 0 && accepted > 0,
        "refused {refused}, accepted {accepted}"
    );
}

/// A world's snapshot with one number changed (every number, three ways
/// each) is refused with an error, or restores a world whose bodies are
/// valid and whose next step, and the step after moving some bodies,
/// report exactly the contacts brute force finds among its bodies: a
/// contact carried over from the snapshot that the bodies do not give, or
/// one missing, is refused when read.
#[test]
fn damaged_world_snapshots_are_refused_or_harmless() {
    let bounds = Aabb::new([0.0, 0.0], [64.0, 64.0]);
    let mut rng = Rng::new(11);
    let mut world = CollisionWorld::with_config(
        bounds,
        Config {
            max_items: 2,
            max_depth: 5,
            ..Config::default()
        },
    );
    let shape = |rng: &mut Rng| match rng.below(3) {
        0 => Shape::Circle {
            radius: 1.0 + rng.below(4) as f32,
        },
        1 => Shape::Aabb {
            half_extents: Vec2::new(1.0 + rng.below(3) as f32, 1.0 + rng.below(3) as f32),
        },
        _ => Shape::Capsule {
            half_segment: Vec2::new(rng.below(3) as f32, 1.0),
            radius: 1.0,
        },
    };
    let mut keys = Vec::new();
    for i in 0..40u32 {
        let pos = Vec2::new(rng.below(64) as f32, rng.below(64) as f32);
        let filter =
            Filter::on(Layers::bit(i % 3)).colliding_with(Layers::from_bits(0b011 | (i & 4)));
        keys.push(world.add(shape(&mut rng), pos, filter, i));
    }
    world.step();
    // A few changes since the step (a move, a removal, a reshape): few
    // enough that the next step is incremental and carries the other
    // contacts over.
    for (j, &k) in keys.iter().enumerate().step_by(16) {
        match j % 3 {
            0 => {
                world.set_position(k, [rng.below(64) as f32, rng.below(64) as f32]);
            }
            1 => {
                world.remove(k);
            }
            _ => {
                world.set_shape(k, shape(&mut rng));
            }
        }
    }
    let value = serde_json::to_value(&world).unwrap();
    let mut paths = Vec::new();
    numbers(&value, &mut Vec::new(), &mut paths);
    assert!(paths.len() > 500, "only {} numbers", paths.len());
    let (mut refused, mut accepted, mut incremental) = (0, 0, 0usize);
    for (i, path) in paths.iter().enumerate() {
        for m in 0..3 {
            let mut v = value.clone();
            let Some(new) = damage(at(&mut v, path), i + m, &mut rng) else {
                continue;
            };
            let restored = catch_unwind(AssertUnwindSafe(|| {
                serde_json::from_value::<CollisionWorld<u32>>(v)
            }))
            .unwrap_or_else(|_| panic!("restoring with {path:?} = {new} panicked"));
            let Ok(mut w) = restored else {
                refused += 1;
                continue;
            };
            accepted += 1;
            let worked = catch_unwind(AssertUnwindSafe(|| {
                for round in 0..2 {
                    let live: Vec<(Key, Body, u32)> =
                        w.iter().map(|(k, b, &v)| (k, b, v)).collect();
                    let brute = crate::world_model::brute_contacts(&live);
                    let events = w.step();
                    incremental += usize::from(!events.full_pass);
                    assert_eq!(
                        events.contacts,
                        &brute[..],
                        "a snapshot with {path:?} = {new}: wrong contacts at step {round}"
                    );
                    let movers: Vec<Key> = w.keys().step_by(10).collect();
                    for k in movers {
                        w.set_position(k, [rng.below(64) as f32, rng.below(64) as f32]);
                    }
                }
                w.tree().validate().unwrap();
            }));
            assert!(
                worked.is_ok(),
                "a snapshot with {path:?} = {new} restored a world that fails"
            );
        }
    }
    println!(
        "damaged world snapshots: {refused} refused, {accepted} restored and working \
         ({incremental} incremental steps)"
    );
    assert!(
        incremental > accepted,
        "the steps after restoring were rarely incremental"
    );
    assert!(
        refused > 0 && accepted > 0,
        "refused {refused}, accepted {accepted}"
    );
}

/// Changes one number of a snapshot, the `choice`-th way of those for its
/// kind: a float to 0, up by a half, negated or 1e30; an integer to 0, 1,
/// `u32::MAX`, one up or down, or a random small value. Returns the new
/// value as text, or `None` when the change would change nothing.
fn damage(n: &mut serde_json::Value, choice: usize, rng: &mut Rng) -> Option<String> {
    if n.is_f64() {
        let old = n.as_f64().unwrap();
        let new = match choice % 4 {
            0 => 0.0,
            1 => old + 0.5,
            2 => -old,
            _ => 1e30,
        };
        *n = serde_json::Value::from(new);
        return (new != old).then(|| new.to_string());
    }
    let old = n.as_u64().unwrap_or(0);
    let new = match choice % 6 {
        0 => 0,
        1 => 1,
        2 => u64::from(u32::MAX),
        3 => old + 1,
        4 => old.saturating_sub(1),
        _ => rng.next_u64() % 1000,
    };
    *n = serde_json::Value::from(new);
    (new != old).then(|| new.to_string())
}

fn numbers(v: &serde_json::Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        serde_json::Value::Number(_) => out.push(path.clone()),
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(i.to_string());
                numbers(x, path, out);
                path.pop();
            }
        }
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                path.push(k.clone());
                numbers(x, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut serde_json::Value, path: &[String]) -> &'a mut serde_json::Value {
    path.iter().fold(v, |v, p| match v {
        serde_json::Value::Array(a) => &mut a[p.parse::<usize>().unwrap()],
        serde_json::Value::Object(o) => o.get_mut(p).unwrap(),
        _ => unreachable!(),
    })
}

/// A small tree with a removal (so a free slot with a bumped generation)
/// and a reused slot, the snapshot this version writes for it, and the
/// snapshot as earlier versions wrote it: the format is unchanged, and an
/// old snapshot restores to a tree that behaves as the original.
#[test]
fn the_snapshot_format_is_stable() {
    let world = Aabb::new([0.0, 0.0], [8.0, 8.0]);
    let config = Config {
        max_items: 2,
        key_seed: 5,
        ..Config::default()
    };
    let mut t = QuadTree::with_config(world, config);
    let keys: Vec<Key> = (0..5)
        .map(|i| t.insert(Aabb::from_point([i as f32, (i * 3 % 8) as f32]), i))
        .collect();
    t.remove(keys[1]);
    t.remove(keys[2]);
    let reused = t.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), 9u32);
    let json = serde_json::to_string(&t).unwrap();
    assert_eq!(json, OLD_SNAPSHOT);
    let mut copy: QuadTree<u32> = serde_json::from_str(OLD_SNAPSHOT).unwrap();
    copy.validate().unwrap();
    assert_eq!(copy.get(reused), Some(&9));
    assert_eq!(copy.get(keys[1]), None);
    assert_eq!(copy.pairs(), t.pairs());
    let (a, b) = (Aabb::from_point([7.0, 7.0]), Aabb::from_point([6.5, 7.0]));
    assert_eq!(copy.insert(a, 10), t.insert(a, 10));
    assert_eq!(copy.insert(b, 11), t.insert(b, 11));
    // A slot without its generation is refused.
    let mut v: serde_json::Value = serde_json::from_str(OLD_SNAPSHOT).unwrap();
    v["slab"]["generations"].as_array_mut().unwrap().pop();
    let err = serde_json::from_value::<QuadTree<u32>>(v).unwrap_err();
    assert!(err.to_string().contains("generations for"), "{err}");
}

/// What [`the_snapshot_format_is_stable`] builds, as written before slots
/// held their generations.
const OLD_SNAPSHOT: &str = r#"{"world":{"min":{"x":0.0,"y":0.0},"max":{"x":8.0,"y":8.0}},"config":{"max_items":2,"max_depth":16,"key_seed":5,"par_min_items":65536},"nodes":[[[0,0,1090519040,1090519040],[3229614080,3229614080,1094713344,1094713344],1,0,0,0,4,[2139095040,2139095040,4286578688,4286578688],[0,0,1082130432,1086324736],4294967295,0,15],[[0,0,1082130432,1082130432],[3221225472,3221225472,1086324736,1086324736],5,5,0,4,3,[2139095040,2139095040,4286578688,4286578688],[0,0,1077936128,1073741824],0,1,5],[[1082130432,0,1090519040,1082130432],[1073741824,3221225472,1092616192,1086324736],4294967295,0,0,0,0,[2139095040,2139095040,4286578688,4286578688],[2139095040,2139095040,4286578688,4286578688],0,1,6],[[0,1082130432,1082130432,1090519040],[3221225472,1073741824,1086324736,1092616192],4294967295,3,0,1,0,[2139095040,2139095040,4286578688,4286578688],[2139095040,2139095040,4286578688,4286578688],0,1,9],[[1082130432,1082130432,1090519040,1090519040],[1073741824,1073741824,1092616192,1092616192],4294967295,4,1,1,1,[1082130432,1082130432,1082130432,1082130432],[2139095040,2139095040,4286578688,4286578688],0,1,10],[[0,0,1073741824,1073741824],[3212836864,3212836864,1077936128,1077936128],4294967295,9,2,4,2,[0,0,1073741824,1073741824],[2139095040,2139095040,4286578688,4286578688],1,2,5],[[1073741824,0,1082130432,1073741824],[1065353216,3212836864,1084227584,1077936128],4294967295,13,1,4,1,[1077936128,1065353216,1077936128,1065353216],[2139095040,2139095040,4286578688,4286578688],1,2,4],[[0,1073741824,1073741824,1082130432],[3212836864,1065353216,1077936128,1084227584],4294967295,0,0,0,0,[2139095040,2139095040,4286578688,4286578688],[2139095040,2139095040,4286578688,4286578688],1,2,1],[[1073741824,1073741824,1082130432,1082130432],[1065353216,1065353216,1084227584,1084227584],4294967295,0,0,0,0,[2139095040,2139095040,4286578688,4286578688],[2139095040,2139095040,4286578688,4286578688],1,2,0]],"free_blocks":[],"entries":[[[0,0,0,0],0,2522864818],[[1077936128,1065353216,1077936128,1065353216],3,2522864818],[[1065353216,1077936128,1065353216,1077936128],1,2522864818],[[1073741824,1086324736,1073741824,1086324736],2,2522864818],[[1082130432,1082130432,1082130432,1082130432],4,2522864818],[[0,0,0,0],0,2522864818],[[1065353216,1065353216,1073741824,1073741824],2,2522864819],[[1077936128,1065353216,1077936128,1065353216],3,2522864818],[[0,0,0,0],4294967295,1],[[0,0,0,0],0,2522864818],[[1065353216,1065353216,1073741824,1073741824],2,2522864819],[[0,0,0,0],4294967295,1],[[0,0,0,0],4294967295,1],[[1077936128,1065353216,1077936128,1065353216],3,2522864818],[[0,0,0,0],4294967295,1],[[0,0,0,0],4294967295,1],[[0,0,0,0],4294967295,1]],"garbage":3,"slab":{"slots":[{"value":0,"node":5,"pos":9},{"value":null,"node":4294967295,"pos":2},{"value":9,"node":5,"pos":10},{"value":3,"node":6,"pos":13},{"value":4,"node":4,"pos":4}],"generations":[2522864818,2522864819,2522864819,2522864818,2522864818],"free_head":1,"len":4,"seed":2522864818}}"#;

/// A tree whose one-by-one inserts still wait to be placed writes the tree
/// its index makes: the same snapshot, byte for byte, as the same calls
/// give once a question has placed the items and a change has moved the
/// index into the tree, whether or not a question came first. The copy
/// restores as a placed tree that goes on as the original does.
#[test]
fn a_deferred_tree_writes_the_placed_form() {
    for (n, max_items) in [(1usize, 1usize), (7, 2), (40, 3), (300, 8), (2_000, 32)] {
        let world = Aabb::new([-50.0, -50.0], [50.0, 50.0]);
        let config = Config {
            max_items,
            key_seed: n as u32,
            ..Config::default()
        };
        let mut rng = Rng::new(n as u64);
        let boxes: Vec<Aabb> = (0..n)
            .map(|i| {
                // A few far outside the world, a pile on one point, the rest spread.
                let c = match i % 11 {
                    0 => [400.0, -300.0],
                    1 | 2 => [3.0, 3.0],
                    _ => [rng.range(-60.0, 60.0), rng.range(-60.0, 60.0)],
                };
                let h = rng.range(0.0, 4.0);
                Aabb::new([c[0] - h, c[1] - h], [c[0] + h, c[1] + h])
            })
            .collect();
        let fill = || {
            let mut t = QuadTree::with_config(world, config);
            let keys: Vec<Key> = boxes
                .iter()
                .zip(0u32..)
                .map(|(b, v)| t.insert(*b, v))
                .collect();
            (t, keys)
        };
        let (deferred, keys) = fill();
        let (asked, _) = fill();
        let _ = asked.query(world).count();
        let (mut placed, _) = fill();
        let _ = placed.pairs();
        // A change that moves nothing: the index is taken into the tree.
        assert!(placed.update(keys[0], boxes[0]));
        placed.validate().unwrap();
        let json = serde_json::to_string(&placed).unwrap();
        assert_eq!(
            serde_json::to_string(&deferred).unwrap(),
            json,
            "n = {n}: deferred"
        );
        assert_eq!(
            serde_json::to_string(&asked).unwrap(),
            json,
            "n = {n}: asked"
        );
        let mut copy = restore(&deferred);
        copy.validate().unwrap();
        let mut original = deferred;
        assert_eq!(copy.pairs(), original.pairs(), "n = {n}");
        for (i, b) in boxes.iter().enumerate().take(5) {
            let moved = b.translate([1.5, -0.5]);
            assert_eq!(copy.update(keys[i], moved), original.update(keys[i], moved));
            assert_eq!(
                copy.remove(keys[(i + 1) % n]),
                original.remove(keys[(i + 1) % n])
            );
            assert_eq!(
                copy.insert(*b, 1_000 + i as u32),
                original.insert(*b, 1_000 + i as u32)
            );
        }
        copy.validate().unwrap();
        assert_eq!(copy.pairs(), original.pairs(), "n = {n}");
        assert_eq!(
            serde_json::to_string(&copy).unwrap(),
            serde_json::to_string(&original).unwrap(),
            "n = {n}: after more changes"
        );
    }
}

/// The snapshot, as JSON, of a tree over [0, 64]² with `max_items` 1 and
/// a point item at each of `points`, with the first one's key.
fn points_to_forge(points: &[[f32; 2]]) -> (Key, serde_json::Value) {
    let world = Aabb::new([0.0, 0.0], [64.0, 64.0]);
    let config = Config {
        max_items: 1,
        ..Config::default()
    };
    let mut t: QuadTree<u32> = QuadTree::with_config(world, config);
    let keys: Vec<Key> = (0u32..)
        .zip(points)
        .map(|(i, &p)| t.insert(Aabb::from_point(p), i))
        .collect();
    t.validate().unwrap();
    (keys[0], serde_json::to_value(&t).unwrap())
}

/// A forged snapshot whose links make a loop below a node with items is
/// refused, not followed: the nodes are checked before any item is placed
/// by walking down them. Here node 1 is made its own first child, and the
/// root is given the item that lived in node 1, so placing that item would
/// descend into node 1 forever.
#[test]
fn a_snapshot_whose_links_loop_is_refused() {
    let (k, mut v) = points_to_forge(&[[4.0, 4.0], [60.0, 60.0]]);
    assert_eq!(v["nodes"][0][2], 1, "the root has children 1..4");
    // Node tuples: cell, loose, children, start, len, cap, load, tight,
    // below, parent, depth, edges.
    let pos = v["nodes"][1][3].clone();
    assert_eq!(v["entries"][pos.as_u64().unwrap() as usize][1], k.index());
    let point = v["entries"][pos.as_u64().unwrap() as usize][0].clone();
    let root = &mut v["nodes"][0];
    root[3] = pos.clone();
    root[4] = 1.into();
    root[5] = 1.into();
    root[7] = point;
    let one = &mut v["nodes"][1];
    one[2] = 1.into();
    one[3] = 0.into();
    one[4] = 0.into();
    one[5] = 0.into();
    v["slab"]["slots"][k.index() as usize]["node"] = 0.into();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let read = serde_json::from_value::<QuadTree<u32>>(v).map(|_| ());
        let _ = tx.send(read.map_err(|e| e.to_string()));
    });
    let read = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("reading the forged snapshot did not finish");
    let err = read.expect_err("the forged snapshot was accepted");
    assert!(err.contains("invalid quadrat snapshot"), "{err}");
}

/// A forged snapshot that links a node to a block marked free, with a child
/// index far out of range, under a node holding an item, is refused with
/// an error, not a panic: the free-looking node is found by its depth
/// before any item is placed by walking down to it.
#[test]
fn a_snapshot_linking_into_a_free_block_is_refused() {
    let (k, mut v) = points_to_forge(&[[4.0, 4.0], [12.0, 12.0], [60.0, 60.0]]);
    // Node tuples: cell, loose, children, start, len, cap, load, tight,
    // below, parent, depth, edges. Node 1 (the lower-left quarter) split.
    assert_eq!(v["nodes"][1][2], 5, "node 1 has children 5..8");
    let slot = k.index() as usize;
    let home = v["slab"]["slots"][slot]["node"].as_u64().unwrap() as usize;
    let pos = v["slab"]["slots"][slot]["pos"].clone();
    let point = v["entries"][pos.as_u64().unwrap() as usize][0].clone();
    // The item moves up to the root.
    for (i, x) in [(3, 0), (4, 0), (5, 0)] {
        v["nodes"][home][i] = x.into();
    }
    let root = &mut v["nodes"][0];
    root[3] = pos;
    root[4] = 1.into();
    root[5] = 1.into();
    root[7] = point;
    v["slab"]["slots"][slot]["node"] = 0.into();
    // Node 5, on the item's path, looks free, reaches everywhere and
    // points far out of range.
    let huge = serde_json::json!([
        f32::MIN.to_bits(),
        f32::MIN.to_bits(),
        f32::MAX.to_bits(),
        f32::MAX.to_bits()
    ]);
    let five = &mut v["nodes"][5];
    five[1] = huge;
    five[2] = 0xFFFF_FFF0u32.into();
    five[10] = 255.into();
    let read = catch_unwind(AssertUnwindSafe(|| {
        serde_json::from_value::<QuadTree<u32>>(v).map(|_| ())
    }))
    .expect("reading the forged snapshot panicked");
    let err = read.expect_err("the forged snapshot was accepted");
    assert!(
        err.to_string().contains("invalid quadrat snapshot"),
        "{err}"
    );
}

/// A tree filled one insert at a time since it was made or cleared, and
/// asked nothing yet, waits with its inserts deferred: the most common
/// state of a tree at a save point. Its snapshot (the placed tree) must
/// read back through a format without field names, where a fixed-size
/// array is written with no length: such an array in the deferred form
/// made every byte after it misread. So must the world's, which holds
/// such a tree.
#[test]
fn deferred_snapshots_through_a_format_without_field_names() {
    let world = Aabb::new([0.0, 0.0], [100.0, 100.0]);
    for n in [1usize, 2, 40, 1_000] {
        let fill = |tree: &mut QuadTree<u32>| {
            for i in 0..n as u32 {
                let p = [(i * 37 % 100) as f32, (i * 61 % 100) as f32];
                tree.insert(Aabb::from_center(p, [1.0, 1.0]), i);
            }
        };
        let mut fresh = QuadTree::new(world);
        fill(&mut fresh);
        let mut cleared = QuadTree::new(world);
        fill(&mut cleared);
        let _ = cleared.pairs();
        cleared.clear();
        fill(&mut cleared);
        for (what, tree) in [("fresh", &fresh), ("cleared", &cleared)] {
            let bytes = postcard::to_allocvec(tree).expect("serialize");
            let copy: QuadTree<u32> = postcard::from_bytes(&bytes)
                .unwrap_or_else(|e| panic!("{what}, {n} items: refused: {e}"));
            assert_eq!(
                serde_json::to_string(&copy).unwrap(),
                serde_json::to_string(tree).unwrap(),
                "{what}, {n} items"
            );
            assert_eq!(copy.pairs(), tree.pairs(), "{what}, {n} items");
        }
        let mut w: CollisionWorld<u32> = CollisionWorld::new(world);
        for i in 0..n as u32 {
            let p = Vec2::new((i * 37 % 100) as f32, (i * 61 % 100) as f32);
            w.add(Shape::Circle { radius: 1.0 }, p, Filter::default(), i);
        }
        let bytes = postcard::to_allocvec(&w).expect("serialize a world");
        let mut copy: CollisionWorld<u32> = postcard::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("a world of {n} bodies: refused: {e}"));
        assert_eq!(
            serde_json::to_string(&copy).unwrap(),
            serde_json::to_string(&w).unwrap(),
            "a world of {n} bodies"
        );
        let _ = w.step();
        let _ = copy.step();
        assert_eq!(copy.events(), w.events(), "a world of {n} bodies, stepped");
    }
}
