//! A thousand particles bouncing in a box: every frame they move, the world
//! steps, and each touching pair is pushed apart and bounces off along the
//! contact normal. Prints the contacts per frame, and the frame time (on
//! standard error, so that standard output is the same on every run).
//!
//! `cargo run --release -p quadrat --example particles`

mod common;
use common::Rng;
use quadrat::{Aabb, CollisionWorld, Filter, Key, Shape, Vec2};
use std::time::{Duration, Instant};

struct Particle {
    key: Key,
    pos: Vec2,
    vel: Vec2,
    radius: f32,
}

fn main() {
    let bounds = Aabb::new([0.0, 0.0], [800.0, 600.0]);
    let mut rng = Rng(1);
    let mut world = CollisionWorld::new(bounds);
    let mut particles: Vec<Particle> = (0..1000)
        .map(|i| {
            let radius = rng.range(2.0, 6.0);
            let pos = Vec2::new(rng.range(10.0, 790.0), rng.range(10.0, 590.0));
            let vel = Vec2::new(rng.range(-2.0, 2.0), rng.range(-2.0, 2.0));
            let key = world.add(Shape::Circle { radius }, pos, Filter::ALL, i);
            Particle {
                key,
                pos,
                vel,
                radius,
            }
        })
        .collect();
    println!(
        "{} particles in an {}x{} box",
        particles.len(),
        bounds.width(),
        bounds.height()
    );

    let energy = |ps: &[Particle]| ps.iter().map(|p| p.vel.length_squared() * 0.5).sum::<f32>();
    let energy_before = energy(&particles);
    let frames = 600;
    let mut busiest = Duration::ZERO;
    let start = Instant::now();
    for frame in 1..=frames {
        let t = Instant::now();
        // Move, bouncing off the walls.
        for p in &mut particles {
            p.pos += p.vel;
            let (lo, hi) = (
                bounds.min + Vec2::splat(p.radius),
                bounds.max - Vec2::splat(p.radius),
            );
            if p.pos.x < lo.x || p.pos.x > hi.x {
                p.vel.x = -p.vel.x;
            }
            if p.pos.y < lo.y || p.pos.y > hi.y {
                p.vel.y = -p.vel.y;
            }
            p.pos = p.pos.max(lo).min(hi);
        }
        // Every particle moved: tell the world in one batch.
        world.set_positions(particles.iter().map(|p| (p.key, p.pos)));
        // Find who touches whom, and bounce them off each other.
        let events = world.step();
        let (contacts, began, ended) = (
            events.contacts.len(),
            events.began.len(),
            events.ended.len(),
        );
        let candidates = events.candidates;
        for pair in world.events().contacts {
            let (i, j) = (world[pair.a], world[pair.b]);
            let n = pair.contact.normal; // from i towards j
            let (a, b) = if i < j {
                let (x, y) = particles.split_at_mut(j);
                (&mut x[i], &mut y[0])
            } else {
                let (x, y) = particles.split_at_mut(i);
                (&mut y[0], &mut x[j])
            };
            // Push apart by the depth, half each.
            let push = n * (pair.contact.depth * 0.5);
            a.pos -= push;
            b.pos += push;
            // Exchange the velocity along the normal when approaching
            // (equal masses, elastic).
            let closing = (a.vel - b.vel).dot(n);
            if closing > 0.0 {
                a.vel -= n * closing;
                b.vel += n * closing;
            }
        }
        busiest = busiest.max(t.elapsed());
        if frame % 60 == 0 {
            println!(
                "frame {frame:3}: {contacts:3} contacts ({began:3} began, {ended:3} ended), {candidates:4} box pairs tested of {}",
                particles.len() * (particles.len() - 1) / 2
            );
        }
    }
    println!(
        "kinetic energy: {energy_before:.1} at the start, {:.1} after {frames} frames (elastic bounces keep it)",
        energy(&particles)
    );
    eprintln!(
        "mean frame time {:.3} ms, slowest {:.3} ms",
        start.elapsed().as_secs_f64() * 1e3 / f64::from(frames),
        busiest.as_secs_f64() * 1e3
    );
}
