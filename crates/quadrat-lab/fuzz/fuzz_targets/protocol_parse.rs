//! Any bytes as a message from the page: `protocol::parse` never panics
//! (the bytes are read as UTF-8, lossily where they are not), and a message
//! it accepts holds only values in the ranges it promises.

#![no_main]

use libfuzzer_sys::fuzz_target;
use quadrat::MAX_DEPTH;
use quadrat_lab::serve::protocol::{Command, parse};
use quadrat_lab::sim::{MAX_COUNT, MAX_ITEMS_LIMIT, MIN_COUNT, SIZE_RANGE, SPEED_RANGE};

/// Coordinates from the page may lie this far outside the world (as in
/// `protocol.rs`).
const COORDINATE_LIMIT: f32 = 1.0e6;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse(&text) {
        Ok(command) => check(&command, &text),
        Err(message) => assert!(!message.is_empty(), "a refusal without a reason: {text:?}"),
    }
});

fn check(command: &Command, text: &str) {
    let coordinate = |v: f32| v.is_finite() && v.abs() <= COORDINATE_LIMIT;
    match command {
        Command::Settings(update) => {
            let within = |v: f32, (lo, hi): (f32, f32)| (lo..=hi).contains(&v);
            assert!(
                update
                    .count
                    .is_none_or(|c| (MIN_COUNT..=MAX_COUNT).contains(&c)),
                "{text:?}"
            );
            assert!(
                update.size.is_none_or(|s| within(s, SIZE_RANGE)),
                "{text:?}"
            );
            assert!(
                update.speed.is_none_or(|s| within(s, SPEED_RANGE)),
                "{text:?}"
            );
            assert!(
                update
                    .max_items
                    .is_none_or(|m| (1..=MAX_ITEMS_LIMIT).contains(&m)),
                "{text:?}"
            );
            assert!(update.max_depth.is_none_or(|d| d <= MAX_DEPTH), "{text:?}");
        }
        Command::Player(direction) => {
            assert!((-1.0..=1.0).contains(&direction.x), "{text:?}");
            assert!((-1.0..=1.0).contains(&direction.y), "{text:?}");
        }
        Command::Query(Some(area)) => {
            assert!(
                [area.min.x, area.min.y, area.max.x, area.max.y]
                    .into_iter()
                    .all(coordinate)
            );
            assert!(
                area.min.x <= area.max.x && area.min.y <= area.max.y,
                "{text:?}"
            );
        }
        Command::Pick(Some(at)) => assert!(coordinate(at.x) && coordinate(at.y), "{text:?}"),
        Command::Query(None) | Command::Pick(None) | Command::Pause(_) | Command::Step => {}
    }
}
