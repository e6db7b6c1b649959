//! The collision world's frame: every body moves a small step, then
//! `step()` finds the contacts and the events. Against a brute-force world
//! that runs the layer filter, the box test and the exact test on every pair.
//!
//! `cargo bench -p quadrat-bench --bench world` — the scenarios of
//! `quadrat::scenario` (uniform, clustered, mixed sizes) at n = 10k and
//! 100k; brute force at 10k. `resting_step`: a tile map of 8k and 200k
//! tiles with 1k movers, where only the movers change. `outside_step`:
//! 100k bodies at rest and 1k that wander outside the world, all around it.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use quadrat::scenario::{Layout, Rng, Scenario};
use quadrat::{CollisionWorld, Contact, Filter, Key, Layers, Shape, Vec2};
use std::hint::black_box;
use std::time::Duration;

/// A body of the benchmark: where it starts and how it moves.
#[derive(Clone, Copy)]
struct Mover {
    shape: Shape,
    start: Vec2,
    vel: Vec2,
    filter: Filter,
}

/// The scenario's boxes as bodies: circles and boxes of the same size, on
/// two layers, one of which ignores itself (a tenth of the pairs are
/// filtered out), each with a small velocity.
fn movers(s: &Scenario) -> Vec<Mover> {
    let mut rng = Rng::new(s.seed ^ 0xB0D1E5);
    s.boxes()
        .into_iter()
        .enumerate()
        .map(|(i, b)| {
            let h = b.size() * 0.5;
            let shape = if i % 2 == 0 {
                Shape::Circle { radius: h.x }
            } else {
                Shape::Aabb { half_extents: h }
            };
            let (most, some) = (Layers::bit(0), Layers::bit(1));
            let filter = if i % 10 == 0 {
                Filter::on(some).colliding_with(most)
            } else {
                Filter::on(most).colliding_with(most | some)
            };
            let speed = s.size * 0.05;
            Mover {
                shape,
                start: b.center(),
                vel: Vec2::new(rng.range(-speed, speed), rng.range(-speed, speed)),
                filter,
            }
        })
        .collect()
}

/// Where mover `m` is at frame `f`: a small step a frame, back and forth
/// over 64 frames, so that the run stays in the scenario's layout.
fn at(m: &Mover, f: u32) -> Vec2 {
    let t = (f % 64) as f32;
    let t = if t < 32.0 { t } else { 64.0 - t };
    m.start + m.vel * t
}

fn world_of(s: &Scenario, movers: &[Mover]) -> (CollisionWorld<u32>, Vec<Key>) {
    let mut world = CollisionWorld::new(s.world);
    let keys = movers
        .iter()
        .enumerate()
        .map(|(i, m)| world.add(m.shape, m.start, m.filter, i as u32))
        .collect();
    (world, keys)
}

/// One frame of the world: move every body, step.
fn frame(world: &mut CollisionWorld<u32>, keys: &[Key], movers: &[Mover], f: u32) -> usize {
    for (&k, m) in keys.iter().zip(movers) {
        world.set_position(k, at(m, f));
    }
    world.step().contacts.len()
}

/// The brute-force world: every pair through the layer rule, the box test
/// and the exact test, contacts kept in a reused buffer (already in key
/// order, as the pairs are visited in order).
fn brute_frame(
    pos: &mut [Vec2],
    movers: &[Mover],
    f: u32,
    out: &mut Vec<(u32, u32, Contact)>,
) -> usize {
    for (p, m) in pos.iter_mut().zip(movers) {
        *p = at(m, f);
    }
    out.clear();
    let boxes: Vec<_> = movers
        .iter()
        .zip(pos.iter())
        .map(|(m, &p)| m.shape.aabb(p))
        .collect();
    for i in 0..movers.len() {
        let (a, pa, ba) = (&movers[i], pos[i], boxes[i]);
        for j in i + 1..movers.len() {
            let b = &movers[j];
            if !a.filter.interacts(b.filter) || !ba.intersects(&boxes[j]) {
                continue;
            }
            if let Some(c) = a.shape.contact(pa, &b.shape, pos[j]) {
                out.push((i as u32, j as u32, c));
            }
        }
    }
    out.len()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("world_frame");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(4));
    for n in [10_000, 100_000] {
        for layout in Layout::ALL {
            let s = Scenario::new(layout, n, 1);
            let movers = movers(&s);
            let (mut world, keys) = world_of(&s, &movers);
            group.throughput(Throughput::Elements(n as u64));
            let mut f = 0;
            let id = BenchmarkId::new(format!("quadrat/{}", layout.name()), n);
            group.bench_function(id, |b| {
                b.iter(|| {
                    f += 1;
                    frame(black_box(&mut world), &keys, &movers, f)
                })
            });
            // The step alone, on bodies that have just moved.
            let id = BenchmarkId::new(format!("step_only/{}", layout.name()), n);
            group.bench_function(id, |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        f += 1;
                        for (&k, m) in keys.iter().zip(&movers) {
                            world.set_position(k, at(m, f));
                        }
                        let t = std::time::Instant::now();
                        black_box(world.step().contacts.len());
                        total += t.elapsed();
                    }
                    total
                })
            });
            if n == 10_000 {
                // Check once that both worlds agree, then time brute force.
                let mut pos = vec![Vec2::ZERO; n];
                let mut out = Vec::new();
                let expect = brute_frame(&mut pos, &movers, f + 1, &mut out);
                assert_eq!(frame(&mut world, &keys, &movers, f + 1), expect);
                let id = BenchmarkId::new(format!("brute_force/{}", layout.name()), n);
                group.bench_function(id, |b| {
                    b.iter(|| {
                        f += 1;
                        brute_frame(&mut pos, &movers, f, &mut out)
                    })
                });
            }
        }
    }
    group.finish();
}

/// A tile map of `tiles` unit boxes (on a layer that never meets itself)
/// with 1,000 circles moving in one 100 × 100 corner: the step carries the
/// resting pairs over and asks only about the movers, so its time should
/// barely change with the map's size.
fn resting(c: &mut Criterion) {
    let mut group = c.benchmark_group("resting_step");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for tiles in [8_000usize, 200_000] {
        let side = (tiles as f32).sqrt().ceil();
        let world_box = quadrat::Aabb::new([0.0, 0.0], [side, side]);
        let mut world = CollisionWorld::new(world_box);
        let tile = Shape::Aabb {
            half_extents: Vec2::new(0.5, 0.5),
        };
        const TILE: Layers = Layers::bit(0);
        const MOVER: Layers = Layers::bit(1);
        let tiles_filter = Filter::on(TILE).colliding_with(MOVER);
        for i in 0..tiles {
            let p = Vec2::new(
                (i % side as usize) as f32 + 0.5,
                (i / side as usize) as f32 + 0.5,
            );
            world.add(tile, p, tiles_filter, i as u32);
        }
        let mut rng = Rng::new(5);
        let mut movers: Vec<(Key, Vec2, Vec2)> = (0..1000)
            .map(|i| {
                let p = Vec2::new(rng.range(0.0, 100.0), rng.range(0.0, 100.0));
                let v = Vec2::new(rng.range(-0.25, 0.25), rng.range(-0.25, 0.25));
                let k = world.add(
                    Shape::Circle { radius: 0.45 },
                    p,
                    Filter::on(MOVER).colliding_with(TILE | MOVER),
                    (tiles + i) as u32,
                );
                (k, p, v)
            })
            .collect();
        world.step();
        group.throughput(Throughput::Elements(1000));
        group.bench_function(BenchmarkId::new("tiles_1k_movers", tiles), |b| {
            b.iter(|| {
                for (k, p, v) in &mut movers {
                    *p += *v;
                    if !(0.0..=100.0).contains(&p.x) {
                        v.x = -v.x;
                    }
                    if !(0.0..=100.0).contains(&p.y) {
                        v.y = -v.y;
                    }
                    world.set_position(*k, *p);
                }
                black_box(world.step().contacts.len())
            })
        });
    }
    group.finish();
}

/// 100,000 circles at rest inside the world and 1,000 small circles that
/// wander outside it, all around: the wanderers are stored at the root,
/// and the step should cost what they meet, not what the world holds.
fn outside(c: &mut Criterion) {
    let mut group = c.benchmark_group("outside_step");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let mut world = CollisionWorld::new(quadrat::Aabb::new([0.0, 0.0], [1000.0, 1000.0]));
    let ball = Shape::Circle { radius: 0.5 };
    let mut rng = Rng::new(9);
    for i in 0..100_000u32 {
        let p = Vec2::new(rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
        world.add(ball, p, Filter::ALL, i);
    }
    let mut wanderers: Vec<(Key, Vec2)> = (0..1000u32)
        .map(|i| {
            let t = rng.range(0.0, std::f32::consts::TAU);
            let r = rng.range(800.0, 2000.0);
            let p = Vec2::new(500.0 + r * t.cos(), 500.0 + r * t.sin());
            (world.add(ball, p, Filter::ALL, 100_000 + i), p)
        })
        .collect();
    world.step();
    group.throughput(Throughput::Elements(1000));
    group.bench_function("1k_wanderers_100k_at_rest", |b| {
        b.iter(|| {
            for (k, p) in &mut wanderers {
                *p += Vec2::new(rng.range(-0.1, 0.1), rng.range(-0.1, 0.1));
                world.set_position(*k, *p);
            }
            black_box(world.step().contacts.len())
        })
    });
    group.finish();
}

criterion_group!(benches, bench, resting, outside);
criterion_main!(benches);
