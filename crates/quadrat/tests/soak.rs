//! The long soak: hundreds of thousands of random operations over boxes from
//! every generator, in every kind of world, with the tree validated after
//! each one and compared with brute force every few dozen.
//!
//! `cargo test --release -p quadrat --test soak -- --nocapture` runs the
//! default 10,000 operations; `QUADRAT_SOAK_OPS` sets how many, and
//! `QUADRAT_SOAK_SECS` a time budget after which it stops early, saying
//! how far it got (`.ci/run` runs up to 300,000 in release under a budget).

mod support;

use std::time::{Duration, Instant};

use quadrat::{Aabb, Config};
use support::shapes::{self, Rng};
use support::tree::Harness;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn soak() {
    let total = env("QUADRAT_SOAK_OPS", 10_000);
    let budget = Duration::from_secs(env("QUADRAT_SOAK_SECS", 3600));
    let started = Instant::now();
    let mut done = 0u64;
    let mut checks = 0u64;
    let mut round = 0u64;
    let worlds = shapes::extreme_worlds();
    'rounds: while done < total {
        // Each round: a fresh tree, its own world and configuration, and a
        // few thousand operations (enough to fill, churn and drain).
        let mut rng = Rng::new(0x5EED ^ round);
        let world = if round % 4 == 3 {
            worlds[rng.below(worlds.len() as u64) as usize]
        } else {
            Aabb::new([0.0, 0.0], [1000.0, 1000.0])
        };
        let config = match round % 5 {
            0 => Config::default(),
            _ => Config {
                max_items: 1 + rng.below(12) as usize,
                max_depth: rng.below(25) as u8,
                key_seed: rng.below(1 << 20) as u32,
                ..Config::default()
            },
        };
        let mut h = Harness::new(world, config);
        for step in 0..5000u64 {
            let op = support::ops::random_op(&mut rng, world, &h);
            let context = || format!("round {round} step {step} ({world:?}, {config:?}) {op:?}");
            h.apply(&op)
                .unwrap_or_else(|e| panic!("{}: {e}", context()));
            // Validation is O(n log n): after every step while the tree is
            // small, every few steps once it is large.
            if h.model.live.len() < 600 || step % 8 == 0 {
                h.check_items()
                    .unwrap_or_else(|e| panic!("{}: {e}", context()));
            }
            if step % 40 == 0 {
                let p = support::ops::random_probe(&h, &mut rng, world);
                h.check(&p)
                    .unwrap_or_else(|e| panic!("{}: {e} with {p:?}", context()));
                checks += 1;
            }
            done += 1;
            if done >= total {
                break 'rounds;
            }
            if started.elapsed() > budget {
                println!("soak: time budget of {budget:?} reached");
                break 'rounds;
            }
        }
        round += 1;
    }
    println!(
        "soak: {done} operations in {round} trees, {checks} full comparisons with brute force, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        done >= total.min(1000),
        "the soak ran only {done} operations"
    );
}
