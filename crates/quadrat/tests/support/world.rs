//! The collision world against a brute-force model: a `Vec` of live bodies
//! whose contacts come from running every pair through `Shape::contact`
//! with the layer rule, and whose queries test every body. [`Harness::apply`]
//! runs one [`Op`] on both and checks what the world returned;
//! [`check_bodies`], [`check_queries`] and [`check_step`] compare the rest.
//! The batch operations (`add_many`, `set_positions`) are also checked
//! against the same calls made one by one on a copy of the world: the same
//! keys, and the same next step, counts and all; refused batches and
//! batches whose iterator panics must leave the world exactly as it was,
//! down to the key of the next body added.
//! Shared by the world tests (`tests/suite/world.rs`, `resting.rs`,
//! `snapshot.rs`) and the `world_ops` and `world_batch` fuzz targets, which
//! include this file by path.

#![allow(dead_code, unreachable_pub)]

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use quadrat::{
    Aabb, Body, CollisionWorld, Config, Contact, ContactPair, Error, Events, Filter, Key, Layers,
    Ray, RayHit, Shape, Vec2, WORLD_LIMIT,
};

macro_rules! ensure {
    ($ok:expr, $($what:tt)+) => {{
        if !$ok {
            return Err(format!($($what)+));
        }
    }};
}

macro_rules! ensure_eq {
    ($a:expr, $b:expr, $($what:tt)+) => {{
        let (a, b) = (&$a, &$b);
        if a != b {
            return Err(format!("{}: {:?} != {:?}", format!($($what)+), a, b));
        }
    }};
}

/// One call on the world. Indices pick a live (or dead) body modulo the
/// count; an index with no body to pick does nothing.
#[derive(Clone, Debug)]
pub enum Op {
    Add(Shape, Vec2, Filter),
    /// `add_many` of valid bodies: the keys a loop of `add` gives.
    AddMany(Vec<(Shape, Vec2, Filter)>),
    /// `try_add_many` of any bodies: accepted, or refused at the first
    /// invalid one with the error [`expected`] names, and nothing changed
    /// (not even the next key).
    TryAddMany(Vec<(Shape, Vec2, Filter)>),
    /// A circle placed exactly touching body `i` (if it is round) along
    /// direction `angle` with radius `r`, moved by `ulps` units in the last
    /// place along `x`.
    AddTouching(usize, f32, f32, i32),
    Remove(usize),
    /// Every call on a removed key: refused, and nothing changes.
    RemoveStale(usize),
    Move(usize, Vec2),
    Nudge(usize, f32, f32),
    Reshape(usize, Shape),
    SetLayer(usize, Layers),
    SetMask(usize, Layers),
    SetFilter(usize, Filter),
    /// `set_positions` with valid positions: the same bodies, count and
    /// next step as a loop of `set_position`.
    SetPositions(Vec<Move>),
    /// `try_set_positions` with any positions: refused at the first
    /// invalid one (stale key or not) with nothing changed, or as above.
    TrySetPositions(Vec<Move>),
    /// `try_add_many` of any bodies from an iterator that panics when asked
    /// for body `at` (modulo the count plus one: `at == len` panics after
    /// the last body). Refused at an invalid body before `at` (reading
    /// stops there), otherwise the panic reaches the caller; either way
    /// nothing changes.
    AddManyPanicking(Vec<(Shape, Vec2, Filter)>, usize),
    /// `try_set_positions` of any moves from an iterator that panics when
    /// asked for move `at` (as above): the batch is read in full before
    /// anything is checked, so the panic always reaches the caller, and
    /// nothing changes.
    SetPositionsPanicking(Vec<Move>, usize),
    /// A non-finite position (which one by `b % 4`), then a negative radius.
    BadAdd(u8),
    BadMove(usize, u8),
    BadShape(usize),
    /// `try_add` with any shape and position, valid or not: accepted, or
    /// refused with the error [`expected`] names and nothing changed.
    TryAdd(Shape, Vec2, Filter),
    /// `try_set_position` with any position.
    TryMove(usize, Vec2),
    /// `try_set_shape` with any shape.
    TryReshape(usize, Shape),
    Step,
    Clear,
    /// `reserve`: nothing observable changes.
    Reserve(usize),
    /// `shrink_to_fit`: nothing observable changes, the last step's events
    /// included.
    ShrinkToFit,
}

/// One move of a batch. Indices pick among the live (or removed) bodies
/// as they were when the batch began, modulo the count; a move with none
/// to pick is left out.
#[derive(Clone, Copy, Debug)]
pub enum Move {
    /// A live body to a position.
    To(usize, Vec2),
    /// A live body by a step from where it is (where the batch found it).
    By(usize, f32, f32),
    /// A live body to where it already is: no move.
    Stay(usize),
    /// A removed body's key: skipped (its position is still checked).
    Stale(usize, Vec2),
}

/// What to ask after an operation.
#[derive(Clone, Debug)]
pub struct Probe {
    pub shape: Shape,
    pub pos: Vec2,
    pub point: Vec2,
    pub mask: Layers,
    pub k: usize,
    pub ray: Ray,
    pub max_dist: f32,
}

/// The live bodies in insertion order, the keys removed, and the contacts
/// of the model's last step.
#[derive(Clone, Debug, Default)]
pub struct Model {
    pub live: Vec<(Key, Body, u32)>,
    pub dead: Vec<Key>,
    /// The contacts the model found at its last step.
    pub contacts: Vec<ContactPair>,
}

/// Every pair of bodies that passes the layer rule, through `Shape::contact`,
/// sorted by key pair.
pub fn brute_contacts(live: &[(Key, Body, u32)]) -> Vec<ContactPair> {
    let mut sorted: Vec<&(Key, Body, u32)> = live.iter().collect();
    sorted.sort_by_key(|e| e.0);
    let mut out = Vec::new();
    for (i, (ka, a, _)) in sorted.iter().enumerate() {
        for (kb, b, _) in &sorted[i + 1..] {
            let (fa, fb) = (a.filter, b.filter);
            let rule =
                (fa.layer.bits() & fb.mask.bits()) != 0 && (fb.layer.bits() & fa.mask.bits()) != 0;
            if !rule {
                continue;
            }
            if let Some(contact) = a.shape.contact(a.position, &b.shape, b.position) {
                out.push(ContactPair {
                    a: *ka,
                    b: *kb,
                    contact,
                });
            }
        }
    }
    out
}

impl Model {
    /// The contacts now, the ones that began and the pairs that ended since
    /// the last step, in the order the world reports them.
    pub fn step(&mut self) -> (Vec<ContactPair>, Vec<ContactPair>, Vec<(Key, Key)>) {
        let now = brute_contacts(&self.live);
        let now_keys: HashSet<(Key, Key)> = now.iter().map(ContactPair::keys).collect();
        let then_keys: HashSet<(Key, Key)> = self.contacts.iter().map(ContactPair::keys).collect();
        let began = now
            .iter()
            .filter(|c| !then_keys.contains(&c.keys()))
            .copied()
            .collect();
        let ended = self
            .contacts
            .iter()
            .map(ContactPair::keys)
            .filter(|k| !now_keys.contains(k))
            .collect();
        self.contacts = now.clone();
        (now, began, ended)
    }

    /// The live bodies on a layer of `mask`.
    pub fn on(&self, mask: Layers) -> impl Iterator<Item = &(Key, Body, u32)> {
        self.live
            .iter()
            .filter(move |e| e.1.filter.layer.bits() & mask.bits() != 0)
    }

    /// A live body's index, `i` modulo the count.
    pub fn pick(&self, i: usize) -> Option<usize> {
        (!self.live.is_empty()).then(|| i % self.live.len())
    }
}

/// The next `f32` up or down from a finite `v`.
pub fn next_f32(v: f32, up: bool) -> f32 {
    if v == 0.0 {
        let tiny = f32::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let bits = v.to_bits();
    f32::from_bits(if (v > 0.0) == up { bits + 1 } else { bits - 1 })
}

pub fn sorted_keys(mut v: Vec<Key>) -> Vec<Key> {
    v.sort_unstable();
    v
}

/// A non-finite position, and the message refusing it.
pub fn bad_pos(b: u8) -> (Vec2, &'static str) {
    match b % 4 {
        0 => (Vec2::new(f32::NAN, 1.0), "position.x is NaN"),
        1 => (Vec2::new(1.0, f32::NAN), "position.y is NaN"),
        2 => (Vec2::new(f32::INFINITY, 1.0), "position.x is infinite"),
        _ => (Vec2::new(1.0, f32::NEG_INFINITY), "position.y is infinite"),
    }
}

/// How the world must answer a body (shape at a position) given to
/// `try_add`, `try_set_position` or `try_set_shape` with a live key.
#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    Accept,
    /// Refused with exactly this error (compared by its message).
    Refuse(Error),
}

/// The documented answer: the position is checked first (`position.x`, then
/// `position.y`: not finite, then beyond [`WORLD_LIMIT`]), then the shape
/// ([`Shape::validate`]), then the shape's sizes against [`WORLD_LIMIT`].
pub fn expected(shape: &Shape, pos: Vec2) -> Expect {
    let position = [("position.x", pos.x), ("position.y", pos.y)];
    for (field, value) in position {
        if !value.is_finite() {
            return Expect::Refuse(Error::NonFinite { field, value });
        }
    }
    for (field, value) in position {
        if value.abs() > WORLD_LIMIT {
            return Expect::Refuse(Error::OutOfRange { field, value });
        }
    }
    if let Err(e) = shape.validate() {
        return Expect::Refuse(e);
    }
    let sizes: &[(&'static str, f32)] = match *shape {
        Shape::Point => &[],
        Shape::Circle { radius } => &[("radius", radius)],
        Shape::Aabb { half_extents: h } => &[("half_extents.x", h.x), ("half_extents.y", h.y)],
        Shape::Capsule {
            half_segment: h,
            radius,
        } => &[
            ("half_segment.x", h.x),
            ("half_segment.y", h.y),
            ("radius", radius),
        ],
    };
    for &(field, value) in sizes {
        if value.abs() > WORLD_LIMIT {
            return Expect::Refuse(Error::OutOfRange { field, value });
        }
    }
    // Within range, the body's box is always finite.
    assert!(shape.aabb(pos).validate().is_ok());
    Expect::Accept
}

/// Whether the world's answer `got` for a body agrees with `expect`; `Ok(true)`
/// when it was accepted.
fn judge(expect: &Expect, got: &Result<(), Error>, what: &str) -> Result<bool, String> {
    match (expect, got) {
        (Expect::Accept, Ok(())) => Ok(true),
        (Expect::Refuse(e), Err(g)) => {
            ensure_eq!(g.to_string(), e.to_string(), "{what}: refused");
            Ok(false)
        }
        _ => Err(format!("{what}: expected {expect:?}, got {got:?}")),
    }
}

/// A world and its model, side by side.
pub struct Harness {
    pub world: CollisionWorld<u32>,
    pub model: Model,
    next: u32,
}

impl Harness {
    pub fn new(bounds: Aabb, config: Config) -> Harness {
        Harness {
            world: CollisionWorld::with_config(bounds, config),
            model: Model::default(),
            next: 0,
        }
    }

    /// A second harness over `world` (a restored copy of this one's world),
    /// with a copy of the model: from here on, both must agree.
    #[allow(dead_code)]
    pub fn fork(&self, world: CollisionWorld<u32>) -> Harness {
        Harness {
            world,
            model: self.model.clone(),
            next: self.next,
        }
    }

    fn added(&mut self, k: Key, shape: Shape, position: Vec2, filter: Filter) {
        let body = Body {
            shape,
            position,
            filter,
        };
        self.model.live.push((k, body, self.next));
        self.next += 1;
    }

    /// A batch of bodies with the values they get when added.
    fn items(&self, bodies: &[(Shape, Vec2, Filter)]) -> Vec<(Shape, Vec2, Filter, u32)> {
        (self.next..)
            .zip(bodies)
            .map(|(v, &(s, p, f))| (s, p, f, v))
            .collect()
    }

    /// Runs one operation on the world and the model, checking what the
    /// world returned. The full comparison is [`check_bodies`],
    /// [`check_queries`] and [`check_step`].
    pub fn apply(&mut self, op: &Op) -> Result<(), String> {
        let (world, model) = (&mut self.world, &mut self.model);
        match *op {
            Op::Add(shape, pos, filter) => {
                let k = world.add(shape, pos, filter, self.next);
                self.added(k, shape, pos, filter);
            }
            Op::AddMany(ref bodies) => {
                let items = self.items(bodies);
                let mut twin = self.world.clone();
                let one_by_one: Vec<Key> = items
                    .iter()
                    .map(|&(s, p, f, v)| twin.add(s, p, f, v))
                    .collect();
                let keys = self.world.add_many(items);
                ensure_eq!(keys, one_by_one, "add_many: keys against a loop of add");
                same_next_step(&mut twin, &self.world, "add_many")?;
                for (&k, &(s, p, f)) in keys.iter().zip(bodies) {
                    self.added(k, s, p, f);
                }
            }
            Op::TryAddMany(ref bodies) => {
                let refusal =
                    bodies
                        .iter()
                        .enumerate()
                        .find_map(|(i, (s, p, _))| match expected(s, *p) {
                            Expect::Accept => None,
                            Expect::Refuse(e) => Some((i, e)),
                        });
                let items = self.items(bodies);
                let twin = self.world.clone();
                let got = self.world.try_add_many(items.clone());
                match (got, refusal) {
                    (Ok(keys), None) => {
                        let mut twin = twin;
                        let one_by_one: Vec<Key> = items
                            .into_iter()
                            .map(|(s, p, f, v)| twin.add(s, p, f, v))
                            .collect();
                        ensure_eq!(keys, one_by_one, "try_add_many: keys against a loop of add");
                        same_next_step(&mut twin, &self.world, "try_add_many")?;
                        for (&k, &(s, p, f)) in keys.iter().zip(bodies) {
                            self.added(k, s, p, f);
                        }
                    }
                    (Err((i, e)), Some((j, expect))) => {
                        ensure_eq!(
                            (i, e.to_string()),
                            (j, expect.to_string()),
                            "try_add_many refused"
                        );
                        unchanged(twin, &self.world, "try_add_many refused")?;
                    }
                    (got, refusal) => {
                        return Err(format!(
                            "try_add_many of {bodies:?}: expected {refusal:?}, got {got:?}"
                        ));
                    }
                }
            }
            Op::AddTouching(i, angle, r, ulps) => {
                let Some(i) = model.pick(i) else {
                    return Ok(());
                };
                let Shape::Circle { radius } = model.live[i].1.shape else {
                    return Ok(());
                };
                let c = model.live[i].1.position;
                let d = radius + r;
                let mut p = c + Vec2::new(angle.cos(), angle.sin()) * d;
                for _ in 0..ulps.unsigned_abs() {
                    p = Vec2::new(next_f32(p.x, ulps > 0), p.y);
                }
                let shape = Shape::Circle { radius: r };
                if expected(&shape, p) != Expect::Accept {
                    // Touching a body at the edge of the range, beyond it.
                    return Ok(());
                }
                let filter = Filter::on(Layers::bit(0));
                let k = world.add(shape, p, filter, self.next);
                self.added(k, shape, p, filter);
            }
            Op::Remove(i) => {
                let Some(i) = model.pick(i) else {
                    return Ok(());
                };
                let (k, _, v) = model.live.swap_remove(i);
                ensure_eq!(world.remove(k), Some(v), "remove {k:?}");
                model.dead.push(k);
            }
            Op::RemoveStale(i) => {
                if model.dead.is_empty() {
                    return Ok(());
                }
                let k = model.dead[i % model.dead.len()];
                ensure_eq!(world.remove(k), None, "remove of stale {k:?}");
                ensure!(
                    !world.set_position(k, [1.0, 1.0]),
                    "set_position of stale {k:?}"
                );
                ensure!(
                    !world.set_shape(k, Shape::Point),
                    "set_shape of stale {k:?}"
                );
                ensure!(!world.set_layer(k, Layers::ALL), "set_layer of stale {k:?}");
                ensure!(!world.set_mask(k, Layers::ALL), "set_mask of stale {k:?}");
                ensure!(
                    !world.set_filter(k, Filter::ALL),
                    "set_filter of stale {k:?}"
                );
                ensure_eq!(world.filter(k), None, "filter of stale {k:?}");
                ensure_eq!(world.layer(k), None, "layer of stale {k:?}");
                ensure_eq!(world.mask(k), None, "mask of stale {k:?}");
                ensure_eq!(
                    world.try_set_position(k, [1.0, 1.0]),
                    Err(Error::StaleKey),
                    "try_set_position of stale {k:?}"
                );
                ensure_eq!(
                    world.try_set_shape(k, Shape::Point),
                    Err(Error::StaleKey),
                    "try_set_shape of stale {k:?}"
                );
            }
            Op::Move(i, p) => {
                let Some(i) = model.pick(i) else {
                    return Ok(());
                };
                ensure!(world.set_position(model.live[i].0, p), "set_position");
                model.live[i].1.position = p;
            }
            Op::Nudge(i, dx, dy) => {
                let Some(i) = model.pick(i) else {
                    return Ok(());
                };
                let p = model.live[i].1.position + Vec2::new(dx, dy);
                ensure!(world.set_position(model.live[i].0, p), "nudge");
                model.live[i].1.position = p;
            }
            Op::Reshape(i, s) => {
                let Some(i) = model.pick(i) else {
                    return Ok(());
                };
                ensure!(world.set_shape(model.live[i].0, s), "set_shape");
                model.live[i].1.shape = s;
            }
            Op::SetLayer(i, l) => {
                let Some(i) = model.pick(i) else {
                    return Ok(());
                };
                ensure!(world.set_layer(model.live[i].0, l), "set_layer");
                model.live[i].1.filter.layer = l;
            }
            Op::SetMask(i, m) => {
                let Some(i) = model.pick(i) else {
                    return Ok(());
                };
                ensure!(world.set_mask(model.live[i].0, m), "set_mask");
                model.live[i].1.filter.mask = m;
            }
            Op::SetFilter(i, f) => {
                let Some(i) = model.pick(i) else {
                    return Ok(());
                };
                ensure!(world.set_filter(model.live[i].0, f), "set_filter");
                model.live[i].1.filter = f;
            }
            Op::SetPositions(ref moves) => {
                let batch = resolve_moves(model, moves);
                let mut twin = self.world.clone();
                let mut live = 0;
                for &(k, p) in &batch {
                    live += usize::from(twin.set_position(k, p));
                }
                let got = self.world.set_positions(batch.iter().copied());
                ensure_eq!(got, live, "set_positions: live keys");
                same_next_step(&mut twin, &self.world, "set_positions")?;
                apply_moves(&mut self.model, &batch);
            }
            Op::TrySetPositions(ref moves) => {
                let batch = resolve_moves(model, moves);
                let refusal = batch.iter().enumerate().find_map(|(i, (_, p))| {
                    match expected(&Shape::Point, *p) {
                        Expect::Accept => None,
                        Expect::Refuse(e) => Some((i, e)),
                    }
                });
                let twin = self.world.clone();
                let got = self.world.try_set_positions(batch.iter().copied());
                match (got, refusal) {
                    (Ok(n), None) => {
                        let mut twin = twin;
                        let mut live = 0;
                        for &(k, p) in &batch {
                            live += usize::from(twin.set_position(k, p));
                        }
                        ensure_eq!(n, live, "try_set_positions: live keys");
                        same_next_step(&mut twin, &self.world, "try_set_positions")?;
                        apply_moves(&mut self.model, &batch);
                    }
                    (Err((i, e)), Some((j, expect))) => {
                        ensure_eq!(
                            (i, e.to_string()),
                            (j, expect.to_string()),
                            "try_set_positions refused"
                        );
                        unchanged(twin, &self.world, "try_set_positions refused")?;
                    }
                    (got, refusal) => {
                        return Err(format!(
                            "try_set_positions of {batch:?}: expected {refusal:?}, got {got:?}"
                        ));
                    }
                }
            }
            Op::AddManyPanicking(ref bodies, at) => {
                let items = self.items(bodies);
                let at = at % (items.len() + 1);
                let refusal = bodies[..at].iter().enumerate().find_map(|(i, (s, p, _))| {
                    match expected(s, *p) {
                        Expect::Accept => None,
                        Expect::Refuse(e) => Some((i, e)),
                    }
                });
                let before = self.world.clone();
                let world = &mut self.world;
                let got = catch_expected(|| world.try_add_many(panicking(&items, at)));
                let what = format!("try_add_many panicking at {at} of {}", items.len());
                match (got, refusal) {
                    (Err(_), None) => {}
                    (Ok(Err((i, e))), Some((j, expect))) => {
                        ensure_eq!(
                            (i, e.to_string()),
                            (j, expect.to_string()),
                            "{what}: refused"
                        );
                    }
                    (Ok(got), refusal) => {
                        return Err(format!("{what}: expected {refusal:?}, got {got:?}"));
                    }
                    (Err(_), Some(refusal)) => {
                        return Err(format!(
                            "{what}: read past the invalid body {refusal:?} into the panic"
                        ));
                    }
                }
                unchanged(before, &self.world, &what)?;
            }
            Op::SetPositionsPanicking(ref moves, at) => {
                let batch = resolve_moves(model, moves);
                let at = at % (batch.len() + 1);
                let before = self.world.clone();
                let world = &mut self.world;
                let got = catch_expected(|| world.try_set_positions(panicking(&batch, at)));
                let what = format!("try_set_positions panicking at {at} of {}", batch.len());
                ensure!(got.is_err(), "{what}: returned {got:?}");
                unchanged(before, &self.world, &what)?;
            }
            Op::BadAdd(b) => {
                let (p, msg) = bad_pos(b);
                let err = world.try_add(Shape::Point, p, Filter::ALL, 0).unwrap_err();
                ensure_eq!(err.to_string(), msg, "try_add at {p:?}");
                let bad = Shape::Circle {
                    radius: -1.0 - f32::from(b),
                };
                match world.try_add(bad, [1.0, 1.0], Filter::ALL, 0) {
                    Err(Error::Negative {
                        field: "radius", ..
                    }) => {}
                    other => return Err(format!("try_add of {bad:?}: {other:?}")),
                }
            }
            Op::BadMove(i, b) => {
                let Some(i) = model.pick(i) else {
                    return Ok(());
                };
                let (p, msg) = bad_pos(b);
                let got = world.try_set_position(model.live[i].0, p);
                ensure_eq!(
                    got.map_err(|e| e.to_string()),
                    Err(msg.to_string()),
                    "try_set_position to {p:?}"
                );
            }
            Op::BadShape(i) => {
                let Some(i) = model.pick(i) else {
                    return Ok(());
                };
                let bad = Shape::Aabb {
                    half_extents: Vec2::new(1.0, f32::NAN),
                };
                let got = world.try_set_shape(model.live[i].0, bad);
                ensure_eq!(
                    got.map_err(|e| e.to_string()),
                    Err("half_extents.y is NaN".to_string()),
                    "try_set_shape to {bad:?}"
                );
            }
            Op::TryAdd(shape, pos, filter) => {
                let expect = expected(&shape, pos);
                let len = world.len();
                let got = world.try_add(shape, pos, filter, self.next);
                let what = format!("try_add({shape:?}, {pos:?})");
                match got {
                    Ok(k) => {
                        judge(&expect, &Ok(()), &what)?;
                        self.added(k, shape, pos, filter);
                    }
                    Err(e) => {
                        judge(&expect, &Err(e), &what)?;
                        ensure_eq!(world.len(), len, "{what}: len after a refusal");
                    }
                }
            }
            Op::TryMove(i, p) => {
                let Some(i) = model.pick(i) else {
                    return Ok(());
                };
                let body = &mut model.live[i];
                let expect = expected(&body.1.shape, p);
                let got = world.try_set_position(body.0, p);
                let what = format!("try_set_position({:?}, {p:?})", body.1.shape);
                if judge(&expect, &got, &what)? {
                    body.1.position = p;
                }
            }
            Op::TryReshape(i, s) => {
                let Some(i) = model.pick(i) else {
                    return Ok(());
                };
                let body = &mut model.live[i];
                let expect = expected(&s, body.1.position);
                let got = world.try_set_shape(body.0, s);
                let what = format!("try_set_shape({s:?}) at {:?}", body.1.position);
                if judge(&expect, &got, &what)? {
                    body.1.shape = s;
                }
            }
            Op::Step => check_step(world, model)?,
            Op::Clear => {
                world.clear();
                model.dead.extend(model.live.drain(..).map(|e| e.0));
            }
            Op::Reserve(n) => world.reserve(n),
            Op::ShrinkToFit => {
                let owned = |e: Events<'_>| {
                    let counts = (e.candidates, e.exact_tests, e.changed, e.full_pass);
                    (
                        e.contacts.to_vec(),
                        e.began.to_vec(),
                        e.ended.to_vec(),
                        counts,
                    )
                };
                let before = owned(world.events());
                world.shrink_to_fit();
                let after = owned(world.events());
                if after != before {
                    let sizes = |e: &(Vec<ContactPair>, Vec<ContactPair>, Vec<(Key, Key)>, _)| {
                        (e.0.len(), e.1.len(), e.2.len(), e.3)
                    };
                    return Err(format!(
                        "shrink_to_fit changed the last step's events: (contacts, began, ended, counts) {:?} became {:?}",
                        sizes(&before),
                        sizes(&after)
                    ));
                }
            }
        }
        if self.model.dead.len() > 4096 {
            self.model.dead.drain(..2048);
        }
        Ok(())
    }
}

/// An iterator over clones of `items` that panics when asked for item
/// `at` (after the last one when `at == items.len()`).
pub fn panicking<T: Clone>(items: &[T], at: usize) -> impl Iterator<Item = T> + '_ {
    (0..=items.len()).map_while(move |i| {
        assert!(i != at, "the caller's iterator panics at item {at}");
        items.get(i).cloned()
    })
}

thread_local! {
    /// Set while [`catch_expected`] runs: the panic hook stays silent.
    static EXPECTING_PANIC: Cell<bool> = const { Cell::new(false) };
    /// Where the panic [`catch_expected`] caught last was raised.
    static CAUGHT_AT: RefCell<Option<(String, u32)>> = const { RefCell::new(None) };
}

/// Runs `f`, catching its panic, which is expected: the panic hook says
/// nothing about it (libFuzzer's would abort the process), while every
/// other panic still reaches the hook that was installed before.
pub fn catch_expected<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    catch_expected_at(f).0
}

/// [`catch_expected`], with the file and line its panic names, if it
/// panicked.
pub fn catch_expected_at<R>(
    f: impl FnOnce() -> R,
) -> (std::thread::Result<R>, Option<(String, u32)>) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if EXPECTING_PANIC.with(Cell::get) {
                let at = info.location().map(|l| (l.file().to_owned(), l.line()));
                CAUGHT_AT.with(|c| *c.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
    CAUGHT_AT.with(|c| c.borrow_mut().take());
    EXPECTING_PANIC.with(|e| e.set(true));
    let got = catch_unwind(AssertUnwindSafe(f));
    EXPECTING_PANIC.with(|e| e.set(false));
    (got, CAUGHT_AT.with(|c| c.borrow_mut().take()))
}

/// The moves of a batch with keys and positions, picked from the model
/// as it is before the batch.
pub fn resolve_moves(model: &Model, moves: &[Move]) -> Vec<(Key, Vec2)> {
    moves
        .iter()
        .filter_map(|m| match *m {
            Move::To(i, p) => model.pick(i).map(|i| (model.live[i].0, p)),
            Move::By(i, dx, dy) => model.pick(i).map(|i| {
                let b = &model.live[i];
                (b.0, b.1.position + Vec2::new(dx, dy))
            }),
            Move::Stay(i) => model
                .pick(i)
                .map(|i| (model.live[i].0, model.live[i].1.position)),
            Move::Stale(i, p) => {
                (!model.dead.is_empty()).then(|| (model.dead[i % model.dead.len()], p))
            }
        })
        .collect()
}

/// The moves of an accepted batch, in order, on the model: stale keys
/// skipped, the last move of a key wins.
fn apply_moves(model: &mut Model, batch: &[(Key, Vec2)]) {
    for &(k, p) in batch {
        if let Some(e) = model.live.iter_mut().find(|e| e.0 == k) {
            e.1.position = p;
        }
    }
}

/// The results of a step, with the counts, as one comparable value.
fn summary(e: &Events<'_>) -> String {
    format!("{e:?}")
}

/// `twin`, which made one by one what `world` made in one batch, must
/// give the same next step: contacts, began, ended, and the counts (the
/// same bodies changed, the same pairs examined). Steps a copy of
/// `world`, so the harness's world is left as it is.
pub fn same_next_step(
    twin: &mut CollisionWorld<u32>,
    world: &CollisionWorld<u32>,
    what: &str,
) -> Result<(), String> {
    let mut copy = world.clone();
    ensure_eq!(
        summary(&copy.step()),
        summary(&twin.step()),
        "{what}: the next step against the same calls one by one"
    );
    Ok(())
}

/// A refused batch leaves `world` as `before` was: the same bodies, the
/// same next step, and the same key for the next body added.
fn unchanged(
    mut before: CollisionWorld<u32>,
    world: &CollisionWorld<u32>,
    what: &str,
) -> Result<(), String> {
    let bodies = |w: &CollisionWorld<u32>| -> Vec<(Key, Body, u32)> {
        w.iter().map(|(k, b, v)| (k, b, *v)).collect()
    };
    ensure_eq!(bodies(world), bodies(&before), "{what}: bodies");
    let mut copy = world.clone();
    let next = copy.add(Shape::Point, [0.0, 0.0], Filter::ALL, u32::MAX);
    ensure_eq!(
        next,
        before.add(Shape::Point, [0.0, 0.0], Filter::ALL, u32::MAX),
        "{what}: the next key"
    );
    same_next_step(&mut before, &copy, what)
}

/// One step of the world and of the model: the contacts, the pairs that
/// began and ended, in the same order; and `events()` repeating them.
pub fn check_step(world: &mut CollisionWorld<u32>, model: &mut Model) -> Result<(), String> {
    let (contacts, began, ended) = model.step();
    let events = world.step();
    ensure_eq!(events.contacts, &contacts[..], "step: contacts");
    ensure_eq!(events.began, &began[..], "step: began");
    ensure_eq!(events.ended, &ended[..], "step: ended");
    let events = world.events(); // the same, readable until the next step
    ensure_eq!(events.contacts, &contacts[..], "events: contacts");
    ensure_eq!(events.began, &began[..], "events: began");
    ensure_eq!(events.ended, &ended[..], "events: ended");
    Ok(())
}

/// Every query against testing every body.
pub fn check_queries(world: &CollisionWorld<u32>, model: &Model, p: &Probe) -> Result<(), String> {
    // Query input beyond the world's range finds nothing.
    let in_range = |v: Vec2| v.x.abs() <= WORLD_LIMIT && v.y.abs() <= WORLD_LIMIT;
    // Overlap: keys and contacts.
    let expect: Vec<(Key, Contact)> = if expected(&p.shape, p.pos) != Expect::Accept {
        Vec::new()
    } else {
        let mut v: Vec<(Key, Contact)> = model
            .on(p.mask)
            .filter_map(|(k, b, _)| {
                p.shape
                    .contact(p.pos, &b.shape, b.position)
                    .map(|c| (*k, c))
            })
            .collect();
        v.sort_by_key(|e| e.0);
        v
    };
    ensure_eq!(
        world.overlap_contacts(&p.shape, p.pos, p.mask),
        expect,
        "overlap_contacts({:?}, {:?}, {:?})",
        p.shape,
        p.pos,
        p.mask
    );
    let keys: Vec<Key> = expect.iter().map(|e| e.0).collect();
    ensure_eq!(
        world.overlap(&p.shape, p.pos, p.mask),
        keys,
        "overlap({:?}, {:?}, {:?})",
        p.shape,
        p.pos,
        p.mask
    );

    // Pick.
    let expect = sorted_keys(
        model
            .on(p.mask)
            .filter(|(_, b, _)| in_range(p.point) && b.shape.contains_point(b.position, p.point))
            .map(|e| e.0)
            .collect(),
    );
    ensure_eq!(
        world.pick(p.point, p.mask),
        expect,
        "pick({:?}, {:?})",
        p.point,
        p.mask
    );

    // Nearest: all bodies by (exact distance, key), the first k; none for
    // a non-finite point.
    let mut by_dist: Vec<(Key, f32)> = model
        .on(p.mask)
        .map(|(k, b, _)| (*k, b.shape.distance_to_point(b.position, p.point)))
        .collect();
    by_dist.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    by_dist.truncate(if p.point.is_finite() && in_range(p.point) {
        p.k
    } else {
        0
    });
    ensure_eq!(
        world.nearest(p.point, p.k, p.mask),
        by_dist,
        "nearest({:?}, {}, {:?})",
        p.point,
        p.k,
        p.mask
    );

    // Ray casts: every body hit, by (distance, key); the first of them.
    let mut hits: Vec<(Key, RayHit)> = model
        .on(p.mask)
        .filter(|_| in_range(p.ray.origin))
        .filter_map(|(k, b, _)| {
            b.shape
                .raycast(b.position, p.ray, p.max_dist)
                .map(|h| (*k, h))
        })
        .collect();
    hits.sort_by(|a, b| a.1.dist.total_cmp(&b.1.dist).then(a.0.cmp(&b.0)));
    ensure_eq!(
        world.raycast(p.ray, p.max_dist, p.mask),
        hits.first().copied(),
        "raycast({:?}, {}, {:?})",
        p.ray,
        p.max_dist,
        p.mask
    );
    ensure_eq!(
        world.raycast_all(p.ray, p.max_dist, p.mask),
        hits,
        "raycast_all({:?}, {}, {:?})",
        p.ray,
        p.max_dist,
        p.mask
    );
    Ok(())
}

/// Accessors, iteration and stale keys.
pub fn check_bodies(world: &CollisionWorld<u32>, model: &Model) -> Result<(), String> {
    ensure_eq!(world.len(), model.live.len(), "len");
    ensure_eq!(world.is_empty(), model.live.is_empty(), "is_empty");
    for &(k, b, v) in &model.live {
        ensure_eq!(world.body(k), Some(b), "body {k:?}");
        ensure_eq!(world.get(k), Some(&v), "value of {k:?}");
        ensure_eq!(world.aabb(k), Some(b.aabb()), "aabb of {k:?}");
        // The broad-phase box holds the shape's box.
        let broad = world.tree().aabb(k);
        ensure!(
            broad.is_some_and(|t| t.contains(&b.aabb())),
            "broad-phase box {broad:?} of {k:?} does not hold {:?}",
            b.aabb()
        );
    }
    for &k in &model.dead {
        ensure!(!world.contains_key(k), "stale {k:?} still answers");
        ensure_eq!(world.body(k), None, "body of stale {k:?}");
        ensure_eq!(world.get(k), None, "value of stale {k:?}");
    }
    let mut iterated: Vec<(Key, Body, u32)> = world.iter().map(|(k, b, v)| (k, b, *v)).collect();
    let mut expect = model.live.clone();
    expect.sort_by_key(|e| e.0);
    ensure!(
        iterated.windows(2).all(|w| w[0].0 < w[1].0),
        "iter not in key order"
    );
    iterated.sort_by_key(|e| e.0);
    ensure_eq!(iterated, expect, "iter");
    Ok(())
}
