//! `CollisionWorld`'s batch operations against the brute-force world of
//! `tests/support/world.rs`, interleaved with every operation of
//! `world_ops`: `add_many` and `try_add_many` of listed bodies and of large
//! grids (built in bulk), with invalid bodies anywhere; `set_positions` and
//! `try_set_positions` of listed moves and of every body at once (the
//! broad phase's one pass), with stale keys, repeated keys, moves to where
//! a body is, and invalid positions anywhere; and both from iterators that
//! panic midway. Accepted batches must give the keys, bodies and next step
//! of the same calls one by one; refused or panicking ones must leave the
//! world exactly as it was, down to the next key.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use quadrat::{Aabb, Filter, Shape, Vec2};

#[path = "../../tests/support/mod.rs"]
mod support;

#[path = "../../tests/support/world.rs"]
mod world_model;

mod common;
mod world_input;

use common::ConfigIn;
use world_input::{BitsIn, BoundsIn, LenIn, OpIn, PosIn, ProbeIn, ShapeIn, StepIn, stepped};
use world_model::{Expect, Model, Move, Op, expected, resolve_moves};

/// Live bodies, at most, after a batch: room for batches large enough to
/// be built in bulk (more than 64 bodies, and half the world).
const MAX_LIVE: usize = 320;

/// A body of a batch.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct BodyIn(ShapeIn, PosIn, BitsIn, BitsIn);

impl BodyIn {
    fn resolve(self, w: Aabb) -> (Shape, Vec2, Filter) {
        let BodyIn(s, p, layer, mask) = self;
        let filter = Filter {
            layer: layer.resolve(),
            mask: mask.resolve(),
        };
        (s.resolve(w), p.resolve(w), filter)
    }
}

/// A move of a batch: indices pick a live body (or a removed key) as the
/// model is before the batch.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum MoveIn {
    To(u16, PosIn),
    By(u16, StepIn, StepIn),
    Stay(u16),
    Stale(u16, PosIn),
}

impl MoveIn {
    fn resolve(self, w: Aabb, model: &Model) -> Option<Move> {
        let pick = |i: u16| model.pick(usize::from(i));
        Some(match self {
            MoveIn::To(i, p) => Move::To(pick(i)?, p.resolve(w)),
            MoveIn::By(i, dx, dy) => {
                let b = pick(i)?;
                let at = model.live[b].1.position;
                Move::To(b, Vec2::new(stepped(at.x, dx, w), stepped(at.y, dy, w)))
            }
            MoveIn::Stay(i) => Move::Stay(pick(i)?),
            MoveIn::Stale(i, p) => Move::Stale(usize::from(i), p.resolve(w)),
        })
    }
}

#[derive(Arbitrary, Debug, Clone)]
enum BatchOpIn {
    /// Any operation of `world_ops`.
    One(OpIn),
    /// Listed bodies, valid or not.
    AddMany(Vec<BodyIn>),
    /// `n` bodies of one shape on a grid from `origin`, `spacing` apart
    /// (touching on the grid when the spacing fits the shape), and maybe
    /// one invalid body at `bad.0`.
    AddGrid {
        n: u8,
        shape: ShapeIn,
        origin: PosIn,
        spacing: LenIn,
        layer: BitsIn,
        mask: BitsIn,
        bad: Option<(u8, BodyIn)>,
    },
    /// Listed bodies from an iterator that panics at body `at`.
    AddManyPanicking(Vec<BodyIn>, u8),
    /// Listed moves, valid or not.
    SetPositions(Vec<MoveIn>),
    /// Every `stride`th live body by the same step (enough of them for the
    /// broad phase's one pass), with `stale` removed keys mixed in and
    /// maybe one move to `bad`.
    MoveAll {
        stride: u8,
        dx: StepIn,
        dy: StepIn,
        stale: u8,
        bad: Option<(u8, PosIn)>,
    },
    /// Listed moves from an iterator that panics at move `at`.
    SetPositionsPanicking(Vec<MoveIn>, u8),
}

/// `bodies` cut to the room left under [`MAX_LIVE`].
fn room(model: &Model, mut bodies: Vec<(Shape, Vec2, Filter)>) -> Vec<(Shape, Vec2, Filter)> {
    bodies.truncate(MAX_LIVE.saturating_sub(model.live.len()));
    bodies
}

/// `AddMany` when every body is valid (the panicking form must accept
/// them), `TryAddMany` otherwise.
fn add_many(bodies: Vec<(Shape, Vec2, Filter)>) -> Op {
    if bodies
        .iter()
        .all(|(s, p, _)| expected(s, *p) == Expect::Accept)
    {
        Op::AddMany(bodies)
    } else {
        Op::TryAddMany(bodies)
    }
}

/// `SetPositions` when every position is valid, `TrySetPositions`
/// otherwise.
fn set_positions(model: &Model, moves: Vec<Move>) -> Op {
    let batch = resolve_moves(model, &moves);
    if batch
        .iter()
        .all(|(_, p)| expected(&Shape::Point, *p) == Expect::Accept)
    {
        Op::SetPositions(moves)
    } else {
        Op::TrySetPositions(moves)
    }
}

impl BatchOpIn {
    fn resolve(&self, w: Aabb, model: &Model) -> Option<Op> {
        Some(match self {
            BatchOpIn::One(op) => op.resolve(w, model)?,
            BatchOpIn::AddMany(bodies) => {
                let bodies = bodies.iter().map(|b| b.resolve(w)).collect();
                add_many(room(model, bodies))
            }
            &BatchOpIn::AddGrid {
                n,
                shape,
                origin,
                spacing,
                layer,
                mask,
                bad,
            } => {
                let (shape, origin, d) = (shape.resolve(w), origin.resolve(w), spacing.resolve(w));
                let filter = Filter {
                    layer: layer.resolve(),
                    mask: mask.resolve(),
                };
                let n = usize::from(n);
                let cols = (n as f32).sqrt().ceil().max(1.0) as usize;
                let mut bodies: Vec<_> = (0..n)
                    .map(|i| {
                        let at = Vec2::new((i % cols) as f32 * d, (i / cols) as f32 * d);
                        (shape, origin + at, filter)
                    })
                    .collect();
                if let Some((at, body)) = bad {
                    let at = usize::from(at) % (bodies.len() + 1);
                    bodies.insert(at, body.resolve(w));
                }
                add_many(room(model, bodies))
            }
            BatchOpIn::AddManyPanicking(bodies, at) => {
                let bodies = bodies.iter().map(|b| b.resolve(w)).collect();
                Op::AddManyPanicking(room(model, bodies), usize::from(*at))
            }
            BatchOpIn::SetPositions(moves) => {
                let moves = moves.iter().filter_map(|m| m.resolve(w, model)).collect();
                set_positions(model, moves)
            }
            &BatchOpIn::MoveAll {
                stride,
                dx,
                dy,
                stale,
                bad,
            } => {
                let stride = usize::from(stride % 4) + 1;
                let mut moves: Vec<Move> = model
                    .live
                    .iter()
                    .enumerate()
                    .step_by(stride)
                    .map(|(i, e)| {
                        let at = e.1.position;
                        Move::To(i, Vec2::new(stepped(at.x, dx, w), stepped(at.y, dy, w)))
                    })
                    .collect();
                for s in 0..usize::from(stale % 4) {
                    let at = (s * 7 + usize::from(stale)) % (moves.len() + 1);
                    moves.insert(at, Move::Stale(s, Vec2::new(1.0, 1.0)));
                }
                if let Some((at, p)) = bad {
                    let at = usize::from(at) % (moves.len() + 1);
                    moves.insert(at, Move::To(at, p.resolve(w)));
                }
                set_positions(model, moves)
            }
            BatchOpIn::SetPositionsPanicking(moves, at) => {
                let moves = moves.iter().filter_map(|m| m.resolve(w, model)).collect();
                Op::SetPositionsPanicking(moves, usize::from(*at))
            }
        })
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    config: ConfigIn,
    bounds: BoundsIn,
    ops: Vec<BatchOpIn>,
    probes: Vec<ProbeIn>,
}

fuzz_target!(|input: Input| {
    world_input::run(
        "world_batch",
        &input.config,
        &input.bounds,
        &input.ops,
        &input.probes,
        BatchOpIn::resolve,
    );
});
