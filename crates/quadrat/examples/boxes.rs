//! Boxes added and removed by key: crates drop onto the ground and onto each
//! other, one is taken away by its key, a new one is dropped, and a bullet
//! box flies through the stack. Prints every collision event.
//!
//! `cargo run --release -p quadrat --example boxes`

use quadrat::{Aabb, CollisionWorld, Filter, Key, Layers, Shape, Vec2};
use std::collections::HashMap;

const GROUND: Layers = Layers::bit(0);
const CRATE: Layers = Layers::bit(1);
const BULLET: Layers = Layers::bit(2);

struct Crate {
    name: String,
    falling: bool,
}

fn main() {
    let mut world: CollisionWorld<Crate> =
        CollisionWorld::new(Aabb::new([0.0, 0.0], [200.0, 100.0]));
    let named = |name: &str| Crate {
        name: name.to_string(),
        falling: false,
    };
    let half = |w: f32, h: f32| Shape::Aabb {
        half_extents: Vec2::new(w, h),
    };

    // The ground: a wide, flat box. Crates collide with the ground and with
    // each other; bullets with crates only.
    world.add(
        half(100.0, 5.0),
        [100.0, 5.0],
        Filter::on(GROUND).colliding_with(CRATE),
        named("ground"),
    );
    let drop = |world: &mut CollisionWorld<Crate>, name: &str, x: f32, y: f32| -> Key {
        let mut c = named(name);
        c.falling = true;
        let filter = Filter::on(CRATE).colliding_with(GROUND | CRATE | BULLET);
        world.add(half(5.0, 5.0), [x, y], filter, c)
    };
    let a = drop(&mut world, "crate-a", 50.0, 40.0);
    drop(&mut world, "crate-b", 52.0, 60.0);
    drop(&mut world, "crate-c", 120.0, 30.0);
    let mut bullet = None;
    // Names by key, kept after removal: ended events may name removed bodies.
    let mut names: HashMap<Key, String> =
        world.iter().map(|(k, _, c)| (k, c.name.clone())).collect();

    for frame in 1..=70 {
        match frame {
            // Take crate-a away by its key: crate-b, on top of it, falls again.
            25 => {
                let gone = world.remove(a).expect("crate-a is there");
                println!("frame {frame:2}: removed {} by key", gone.name);
                wake(&mut world);
            }
            30 => {
                let d = drop(&mut world, "crate-d", 121.0, 70.0);
                names.insert(d, "crate-d".to_string());
                println!("frame {frame:2}: dropped crate-d");
            }
            45 => {
                let filter = Filter::on(BULLET).colliding_with(CRATE);
                let b = world.add(half(2.0, 1.0), [0.0, 14.0], filter, named("bullet"));
                bullet = Some(b);
                names.insert(b, "bullet".to_string());
                println!("frame {frame:2}: fired a bullet along y = 14");
            }
            _ => {}
        }
        // Falling crates fall 2 units a frame; the bullet flies 8.
        let movers: Vec<(Key, Vec2)> = world
            .iter()
            .filter(|(k, _, c)| c.falling || Some(*k) == bullet)
            .map(|(k, b, _)| (k, b.position))
            .collect();
        for (k, p) in movers {
            let v = if Some(k) == bullet {
                Vec2::new(8.0, 0.0)
            } else {
                Vec2::new(0.0, -2.0)
            };
            world.set_position(k, p + v);
        }

        world.step();
        let events = world.events();
        let name = |k: Key| names[&k].as_str();
        for pair in events.began {
            println!(
                "frame {frame:2}: {} touches {} (depth {:.1})",
                name(pair.a),
                name(pair.b),
                pair.contact.depth
            );
        }
        for &(a, b) in events.ended {
            println!("frame {frame:2}: {} no longer touches {}", name(a), name(b));
        }
        // Crates that touch something below them land: pushed up out of it,
        // and stop falling. A crate hit by the bullet is destroyed.
        let mut landed = Vec::new();
        let mut shot = Vec::new();
        for pair in events.contacts {
            if Some(pair.a) == bullet || Some(pair.b) == bullet {
                shot.push(if Some(pair.a) == bullet {
                    pair.b
                } else {
                    pair.a
                });
                continue;
            }
            // The normal points from a to b: b is above a when it points up.
            let n = pair.contact.normal;
            let (upper, up) = if n.y > 0.0 { (pair.b, n) } else { (pair.a, -n) };
            if up.y > 0.5 {
                landed.push((upper, up * pair.contact.depth));
            }
        }
        for (k, lift) in landed {
            let p = world.position(k).unwrap();
            world.set_position(k, p + lift);
            world[k].falling = false;
        }
        for k in shot {
            if let Some(c) = world.remove(k) {
                println!("frame {frame:2}: the bullet destroys {}", c.name);
                wake(&mut world);
            }
        }
    }
    let mut left: Vec<String> = world
        .iter()
        .map(|(_, b, c)| format!("{} at ({:.0}, {:.0})", c.name, b.position.x, b.position.y))
        .collect();
    left.sort();
    println!("left: {}", left.join(", "));
}

/// Every crate falls again (until it lands) after something was taken away.
fn wake(world: &mut CollisionWorld<Crate>) {
    for (_, _, c) in world.iter_mut() {
        c.falling = c.name.starts_with("crate");
    }
}
