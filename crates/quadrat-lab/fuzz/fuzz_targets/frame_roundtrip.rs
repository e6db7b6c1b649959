//! Frames of simulations built from arbitrary (valid) settings, ticked and
//! queried: `frame::decode` gives back what `frame::encode` wrote, the
//! header exactly and positions within half a quantization step.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use quadrat::scenario::Layout;
use quadrat::{Aabb, MAX_DEPTH, Vec2};
use quadrat_lab::serve::frame::{self, Decoder, Encoder, FrameInfo};
use quadrat_lab::sim::{
    BroadPhase, LEVEL_SPEED_MAX, MAX_ITEMS_LIMIT, MIN_COUNT, SIZE_RANGE, SPEED_RANGE, Scene,
    Settings, Simulation, WORLD,
};

/// A few hundred objects at most, so that one run stays well under a
/// millisecond.
const MAX_OBJECTS: u16 = 300;

#[derive(Arbitrary, Debug)]
struct Input {
    count: u16,
    size: u8,
    speed: u8,
    layout: u8,
    tiles: u16,
    max_items: u16,
    max_depth: u8,
    brute_force: bool,
    seed: u64,
    ticks: u8,
    player: (i8, i8),
    query: Option<[i16; 4]>,
    pick: Option<[i16; 2]>,
    info: (u32, bool, f32, u32),
}

/// `t` in `0..=255` as a point of `lo..=hi`.
fn between((lo, hi): (f32, f32), t: u8) -> f32 {
    lo + (hi - lo) * f32::from(t) / 255.0
}

fn settings(input: &Input) -> Settings {
    let scene = if input.layout % 5 == 4 && !input.brute_force {
        Scene::Level
    } else {
        Scene::Objects(Layout::ALL[usize::from(input.layout) % Layout::ALL.len()])
    };
    // The level's movers go at most at LEVEL_SPEED_MAX.
    let speeds = match scene {
        Scene::Level => (SPEED_RANGE.0, LEVEL_SPEED_MAX),
        Scene::Objects(_) => SPEED_RANGE,
    };
    Settings {
        count: MIN_COUNT + usize::from(input.count % MAX_OBJECTS),
        size: between(SIZE_RANGE, input.size),
        speed: between(speeds, input.speed),
        scene,
        tiles: usize::from(input.tiles % 2_000),
        max_items: 1 + usize::from(input.max_items) % MAX_ITEMS_LIMIT,
        max_depth: input.max_depth % (MAX_DEPTH + 1),
        broad_phase: if input.brute_force {
            BroadPhase::BruteForce
        } else {
            BroadPhase::Quadtree
        },
        seed: input.seed,
    }
}

fuzz_target!(|input: Input| {
    let mut sim = Simulation::new(settings(&input)).expect("valid settings");
    // Coordinates a little past the world on every side.
    let at = |v: i16| f32::from(v) / f32::from(i16::MAX) * WORLD * 0.6 + WORLD * 0.5;
    let unit = |v: i8| (f32::from(v) / 127.0).clamp(-1.0, 1.0);
    sim.set_player_direction(Vec2::new(unit(input.player.0), unit(input.player.1)));
    sim.set_query(input.query.map(|[x0, y0, x1, y1]| {
        let (x0, y0, x1, y1) = (at(x0), at(y0), at(x1), at(y1));
        Aabb::new([x0.min(x1), y0.min(y1)], [x0.max(x1), y0.max(y1)])
    }));
    // Frames coded against the one before decode to what key frames of
    // the same ticks decode to.
    let (mut encoder, mut decoder) = (Encoder::new(), Decoder::new());
    let (mut delta, mut key) = (Vec::new(), Vec::new());
    for _ in 0..=input.ticks % 3 {
        sim.tick(true);
        encoder.encode(&sim, FrameInfo::default(), &mut delta);
        frame::encode(&sim, FrameInfo::default(), &mut key);
        let (got, want) = (
            decoder.decode(&delta).expect("a frame decodes"),
            frame::decode(&key).expect("a key frame decodes"),
        );
        assert_eq!((got.objects, got.leaves), (want.objects, want.leaves));
        assert_eq!((got.tiles, got.touched), (want.tiles, want.touched));
    }
    sim.pick(input.pick.map(|[x, y]| Vec2::new(at(x), at(y))));
    sim.tick(false);

    let (number, paused, sim_fps, dropped) = input.info;
    let info = FrameInfo {
        frame: number,
        paused,
        sim_fps,
        dropped,
    };
    let mut bytes = Vec::new();
    frame::encode(&sim, info, &mut bytes);
    let decoded = frame::decode(&bytes).expect("an encoded frame decodes");
    let h = decoded.header;
    assert_eq!((h.frame, h.dropped), (number, dropped));
    assert_eq!(h.sim_fps.to_bits(), sim_fps.to_bits());
    assert_eq!(h.flags & frame::Header::PAUSED != 0, paused);
    assert_eq!(h.count as usize, sim.count());
    assert_eq!(h.player, sim.player());
    assert_eq!(decoded.objects.len(), sim.positions().len());

    let step = WORLD / 65535.0;
    let near = |got: f32, want: f32| (got - want.clamp(0.0, WORLD)).abs() <= step;
    for (i, object) in decoded.objects.iter().enumerate() {
        let p = sim.positions()[i];
        let b = sim.shapes()[i].aabb(p);
        assert!(
            near(object.center.x, p.x) && near(object.center.y, p.y),
            "{i}: {object:?} vs {p:?}"
        );
        assert!(near(object.half.x, b.width() / 2.0) && near(object.half.y, b.height() / 2.0));
        assert_eq!(object.marks, sim.marks()[i]);
    }
    if sim.tree_kept() {
        let leaves: Vec<Aabb> = sim
            .tree()
            .nodes()
            .filter(|n| n.is_leaf)
            .map(|n| n.bounds)
            .collect();
        assert_eq!(decoded.leaves.len(), leaves.len());
        for (got, want) in decoded.leaves.iter().zip(&leaves) {
            assert_eq!(got.cell, *want);
        }
    } else {
        assert!(decoded.leaves.is_empty());
    }

    // Encoding is a function of the simulation: the same bytes again.
    let mut again = Vec::new();
    frame::encode(&sim, info, &mut again);
    assert_eq!(bytes, again);
});
