//! A shooter: enemies (circles) walk towards the player through a wood of
//! trees (bigger circles that block both walkers and bullets). The player
//! shoots at the nearest enemy; each bullet is a ray cast that hits the
//! first enemy or tree in its way. Prints every kill, every bite, and the
//! first shot at each enemy that a tree stops.
//!
//! `cargo run --release -p quadrat --example shooter`

mod common;
use common::Rng;
use quadrat::{Aabb, CollisionWorld, Filter, Layers, Ray, Shape, Vec2};

const PLAYER: Layers = Layers::bit(0);
const ENEMY: Layers = Layers::bit(1);
const TREE: Layers = Layers::bit(2);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Thing {
    Player,
    Enemy(u32),
    Tree(u32),
}

fn main() {
    let bounds = Aabb::new([0.0, 0.0], [400.0, 300.0]);
    let centre = bounds.center();
    let mut world = CollisionWorld::new(bounds);
    let mut rng = Rng(2002);

    let player = world.add(
        Shape::Circle { radius: 6.0 },
        centre,
        Filter::on(PLAYER).colliding_with(ENEMY),
        Thing::Player,
    );
    // Trees stand still and only get in the way: they collide with nothing
    // themselves, but enemies collide with them.
    let mut trees = 0;
    while trees < 14 {
        let p = Vec2::new(rng.range(20.0, 380.0), rng.range(20.0, 280.0));
        let radius = rng.range(8.0, 16.0);
        if (p - centre).length() > radius + 30.0 {
            let filter = Filter::on(TREE).colliding_with(ENEMY);
            world.add(Shape::Circle { radius }, p, filter, Thing::Tree(trees));
            trees += 1;
        }
    }
    // Enemies come from the edges.
    let enemies = 30;
    for i in 0..enemies {
        let t = i as f32 / enemies as f32 * std::f32::consts::TAU;
        let p = centre + Vec2::new(t.cos() * 190.0, t.sin() * 140.0);
        world.add(
            Shape::Circle { radius: 4.0 },
            p,
            Filter::on(ENEMY).colliding_with(PLAYER | TREE),
            Thing::Enemy(i),
        );
    }
    println!("{enemies} enemies, {trees} trees; the player shoots every 6th frame");

    let (mut shots, mut kills, mut blocked, mut bites) = (0, 0, 0, 0);
    let mut last_blocked = None;
    for frame in 1..=600 {
        // Enemies walk towards the player.
        let walkers: Vec<_> = world
            .iter()
            .filter(|(_, _, v)| matches!(v, Thing::Enemy(_)))
            .map(|(k, b, _)| (k, b.position))
            .collect();
        if walkers.is_empty() {
            println!("frame {frame}: no enemies left");
            break;
        }
        for (k, p) in walkers {
            let to_player = centre - p;
            world.set_position(k, p + to_player * (1.0 / to_player.length()));
        }
        // Enemies that run into a tree are pushed back out of it; an enemy
        // that reaches the player bites and is gone.
        world.step();
        let mut pushes = Vec::new();
        let mut biters = Vec::new();
        for pair in world.events().contacts {
            let (a, b) = (world[pair.a], world[pair.b]);
            match (a, b) {
                (Thing::Tree(_), Thing::Enemy(_)) => {
                    pushes.push((pair.b, pair.contact.normal * pair.contact.depth))
                }
                (Thing::Enemy(_), Thing::Tree(_)) => {
                    pushes.push((pair.a, -pair.contact.normal * pair.contact.depth))
                }
                _ => {}
            }
        }
        for pair in world.events().began {
            if pair.a == player || pair.b == player {
                biters.push(if pair.a == player { pair.b } else { pair.a });
            }
        }
        for (k, push) in pushes {
            if let Some(p) = world.position(k) {
                // Out of the tree, and a little sideways so as not to stick.
                world.set_position(k, p + push + Vec2::new(-push.y, push.x) * 0.5);
            }
        }
        for k in biters {
            println!("frame {frame:3}: {:?} bites the player", world[k]);
            world.remove(k);
            bites += 1;
        }
        // Shoot at the nearest enemy; trees may be in the way.
        let target = match frame % 6 {
            0 => world.nearest(centre, 1, ENEMY).first().copied(),
            _ => None,
        };
        if let Some((target, dist)) = target {
            let aim = world.position(target).unwrap() - centre;
            shots += 1;
            let bullet = Ray::new(centre, aim);
            match world.raycast(bullet, 250.0, ENEMY | TREE) {
                Some((hit, at)) if world[hit] == world[target] => {
                    println!(
                        "frame {frame:3}: shot {shots:2} hits {:?} at {:.1} (nearest, {dist:.1} away)",
                        world[hit], at.dist
                    );
                    world.remove(hit);
                    kills += 1;
                }
                Some((hit, at)) => {
                    if matches!(world[hit], Thing::Tree(_)) {
                        blocked += 1;
                        if last_blocked != Some(target) {
                            println!(
                                "frame {frame:3}: shot {shots:2} aimed at {:?} stopped by {:?} at {:.1}",
                                world[target], world[hit], at.dist
                            );
                        }
                        last_blocked = Some(target);
                    } else {
                        println!(
                            "frame {frame:3}: shot {shots:2} aimed at {:?} hits {:?} at {:.1}",
                            world[target], world[hit], at.dist
                        );
                        world.remove(hit);
                        kills += 1;
                    }
                }
                None => println!("frame {frame:3}: shot {shots:2} misses (out of range)"),
            }
        }
    }
    let left = world
        .values()
        .filter(|v| matches!(v, Thing::Enemy(_)))
        .count();
    println!(
        "{shots} shots: {kills} enemies down, {blocked} stopped by trees; {bites} bites; {left} enemies left"
    );
    // Everything along one line through the wood, in order.
    let line = Ray::new([0.0, centre.y], [1.0, 0.0]);
    let along: Vec<String> = world
        .raycast_all(line, f32::INFINITY, Layers::ALL)
        .iter()
        .map(|(k, h)| format!("{:?} at {:.1}", world[*k], h.dist))
        .collect();
    println!("along y = {}: {}", centre.y, along.join(", "));
}
