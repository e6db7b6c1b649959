//! A player moved through a crowd by scripted arrow-key presses. After each
//! move it prints the player's candidate set (the bodies whose boxes touch
//! its box, as the quadtree finds them) and its contacts (those the exact
//! test confirms), with what began and ended.
//!
//! `cargo run --release -p quadrat --example player`

mod common;
use common::Rng;
use quadrat::{Aabb, CollisionWorld, Filter, Key, Layers, Shape, Vec2};

const PLAYER: Layers = Layers::bit(0);
const CROWD: Layers = Layers::bit(1);

fn main() {
    let bounds = Aabb::new([0.0, 0.0], [200.0, 200.0]);
    let mut world = CollisionWorld::new(bounds);
    let mut rng = Rng(4);

    // The crowd: round and square people standing about, who ignore each
    // other and collide with the player only.
    for i in 0..300 {
        let p = Vec2::new(rng.range(0.0, 200.0), rng.range(0.0, 200.0));
        let shape = if i % 3 == 0 {
            Shape::Aabb {
                half_extents: Vec2::new(3.0, 3.0),
            }
        } else {
            Shape::Circle {
                radius: rng.range(2.0, 4.0),
            }
        };
        world.add(shape, p, Filter::on(CROWD).colliding_with(PLAYER), i);
    }
    let start = Vec2::new(20.0, 20.0);
    let player_shape = Shape::Aabb {
        half_extents: Vec2::new(4.0, 4.0),
    };
    let player_filter = Filter::on(PLAYER).colliding_with(CROWD);
    let player = world.add(player_shape, start, player_filter, usize::MAX);
    world.step();
    println!(
        "a crowd of {} in a {}x{} square; the player is a 8x8 box at ({}, {})",
        world.len() - 1,
        bounds.width(),
        bounds.height(),
        start.x,
        start.y
    );

    let script = "→→→→↑↑↑→→↓↓↓↓←←↑↑↑↑↑↑→→→→";
    let name = |k: Key, world: &CollisionWorld<usize>| format!("#{}", world[k]);
    let list = |keys: &[Key], world: &CollisionWorld<usize>| {
        let names: Vec<String> = keys.iter().map(|&k| name(k, world)).collect();
        format!("[{}]", names.join(" "))
    };
    for (step, key) in script.chars().enumerate() {
        let dir = match key {
            '→' => Vec2::new(1.0, 0.0),
            '←' => Vec2::new(-1.0, 0.0),
            '↑' => Vec2::new(0.0, 1.0),
            _ => Vec2::new(0.0, -1.0),
        };
        let pos = world.position(player).unwrap() + dir * 6.0;
        world.set_position(player, pos);

        // Candidates: what the quadtree returns for the player's box.
        let mut candidates: Vec<Key> = world
            .tree()
            .query(world.aabb(player).unwrap())
            .map(|(k, _)| k)
            .filter(|&k| k != player)
            .collect();
        candidates.sort();
        // Contacts: the exact test on those, through the world's step.
        world.step();
        let events = world.events();
        let other = |a: Key, b: Key| if a == player { b } else { a };
        let touching: Vec<Key> = events
            .contacts
            .iter()
            .filter(|c| c.a == player || c.b == player)
            .map(|c| other(c.a, c.b))
            .collect();
        let began: Vec<Key> = events.began.iter().map(|c| other(c.a, c.b)).collect();
        let ended: Vec<Key> = events.ended.iter().map(|&(a, b)| other(a, b)).collect();
        let mut line = format!(
            "{:2} {key} ({:3}, {:3}): candidates {:<16} touching {:<12}",
            step + 1,
            pos.x,
            pos.y,
            list(&candidates, &world),
            list(&touching, &world)
        );
        if !began.is_empty() {
            line += &format!(" began {}", list(&began, &world));
        }
        if !ended.is_empty() {
            line += &format!(" ended {}", list(&ended, &world));
        }
        println!("{}", line.trim_end());
        // The same contacts, asked directly: which crowd bodies the player's
        // shape overlaps right now.
        assert_eq!(world.overlap(&player_shape, pos, CROWD), touching);
    }
    let (near, dist) = world.nearest(world.position(player).unwrap(), 1, CROWD)[0];
    println!(
        "nearest to the player's centre at the end: {} at {dist:.2}",
        name(near, &world)
    );
}
