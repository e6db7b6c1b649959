//! The classic game loop: every frame, clear the tree, insert every object,
//! ask each object for its candidates, and run the exact test on them; then
//! the same frame with `update` and the pair finder instead; and last, the
//! `CollisionWorld` that does both phases and reports contact events.
//!
//! `cargo run --release -p quadrat --example game_loop`

mod common;
use common::Rng;
use quadrat::{Aabb, CollisionWorld, Filter, QuadTree, Shape, Vec2};
use std::time::Instant;

struct Ball {
    pos: Vec2,
    vel: Vec2,
    radius: f32,
}

impl Ball {
    fn bounds(&self) -> Aabb {
        Aabb::from_center(self.pos, [self.radius, self.radius])
    }
    fn shape(&self) -> Shape {
        Shape::Circle {
            radius: self.radius,
        }
    }
    /// The exact test: do the two discs share a point?
    fn touches(&self, other: &Ball) -> bool {
        self.shape().intersects(self.pos, &other.shape(), other.pos)
    }
}

fn main() {
    let n = 20_000;
    // A 1000 x 1000 world, with balls sized so that each ball's box overlaps
    // about 3 others: boxes of side s at uniform random centres have
    // n * (2s)² / 1000² partners on average.
    let world = Aabb::new([0.0, 0.0], [1000.0, 1000.0]);
    let radius = 1000.0 * (3.0 / (4.0 * n as f32)).sqrt() / 2.0;
    let mut place = Rng(42);
    let mut rng = Rng(7);
    let mut balls: Vec<Ball> = (0..n)
        .map(|_| {
            let pos = Vec2::new(place.range(0.0, 1000.0), place.range(0.0, 1000.0));
            Ball {
                pos,
                vel: Vec2::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)),
                radius,
            }
        })
        .collect();
    println!(
        "{n} balls of radius {:.2} in a {}x{} world",
        balls[0].radius,
        world.width(),
        world.height()
    );

    // 1. The tutorial way: clear and refill every frame, one query per object.
    let mut tree: QuadTree<usize> = QuadTree::new(world);
    let mut candidates = Vec::new();
    for frame in 0..5 {
        let t = Instant::now();
        tree.clear();
        for (i, ball) in balls.iter().enumerate() {
            tree.insert(ball.bounds(), i);
        }
        let (mut checks, mut hits) = (0usize, 0usize);
        for (i, ball) in balls.iter().enumerate() {
            candidates.clear();
            tree.query_keys_into(ball.bounds(), &mut candidates);
            for &k in &candidates {
                let j = tree[k];
                if j > i {
                    checks += 1;
                    hits += usize::from(ball.touches(&balls[j]));
                }
            }
        }
        println!(
            "clear+insert+query frame {frame}: {checks} exact tests (brute force: {}), {hits} collisions, {:.2} ms",
            n * (n - 1) / 2,
            t.elapsed().as_secs_f64() * 1e3
        );
        step(&mut balls, world);
    }

    // 2. Keyed: insert once, update moved objects, find each pair once.
    let mut tree: QuadTree<usize> = QuadTree::new(world);
    let keys: Vec<_> = balls
        .iter()
        .enumerate()
        .map(|(i, b)| tree.insert(b.bounds(), i))
        .collect();
    for frame in 0..5 {
        let t = Instant::now();
        for (ball, &k) in balls.iter().zip(&keys) {
            tree.update(k, ball.bounds());
        }
        let (mut checks, mut hits) = (0usize, 0usize);
        tree.for_each_pair(|a, b| {
            checks += 1;
            hits += usize::from(balls[tree[a]].touches(&balls[tree[b]]));
        });
        println!(
            "update+pairs frame {frame}: {checks} exact tests, {hits} collisions, {:.2} ms, {} nodes, depth {}",
            t.elapsed().as_secs_f64() * 1e3,
            tree.node_count(),
            tree.depth()
        );
        step(&mut balls, world);
    }

    // 3. The collision world: bodies with exact shapes; `step` runs the
    //    broad phase, the exact test, and says which contacts began and ended.
    let mut bodies = CollisionWorld::new(world);
    // All at once: one bulk build of the broad phase.
    let keys = bodies.add_many(
        balls
            .iter()
            .enumerate()
            .map(|(i, b)| (b.shape(), b.pos, Filter::ALL, i)),
    );
    for frame in 0..5 {
        let t = Instant::now();
        // Every ball moved: one pass over the broad phase.
        bodies.set_positions(keys.iter().zip(&balls).map(|(&k, ball)| (k, ball.pos)));
        let events = bodies.step();
        println!(
            "world frame {frame}: {} exact tests, {} contacts ({} began, {} ended), {:.2} ms",
            events.exact_tests,
            events.contacts.len(),
            events.began.len(),
            events.ended.len(),
            t.elapsed().as_secs_f64() * 1e3
        );
        step(&mut balls, world);
    }
}

/// Moves every ball and bounces it off the world's walls.
fn step(balls: &mut [Ball], world: Aabb) {
    for b in balls {
        b.pos += b.vel;
        if b.pos.x < world.min.x || b.pos.x > world.max.x {
            b.vel.x = -b.vel.x;
        }
        if b.pos.y < world.min.y || b.pos.y > world.max.y {
            b.vel.y = -b.vel.y;
        }
    }
}
