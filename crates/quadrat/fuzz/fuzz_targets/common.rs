//! What the fuzz targets share: coordinates decoded from the input, and a
//! count of the operations run, printed when the fuzzer exits.

#![allow(dead_code)]

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use arbitrary::Arbitrary;
use quadrat::{Aabb, Config, Vec2};

/// One coordinate: raw, an exact edge value, or a fraction of the world's
/// extent on its axis (`lo..hi`); `NonFinite` only where non-finite input
/// is allowed (elsewhere it is clamped).
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Coord {
    Raw(f32),
    Special(u8, u8),
    /// `lo + (hi - lo) * f / 4096`: from -8 to +8 world widths.
    Frac(i16),
    NonFinite(u8),
}

impl Coord {
    /// The value, possibly NaN or infinite.
    pub fn any(self, lo: f32, hi: f32) -> f32 {
        match self {
            Coord::Raw(v) => v,
            Coord::Special(sel, k) => special(lo, hi, sel, k),
            Coord::Frac(f) => {
                let v = f64::from(lo) + (f64::from(hi) - f64::from(lo)) * f64::from(f) / 4096.0;
                clamp_f32(v)
            }
            Coord::NonFinite(i) => [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][usize::from(i) % 3],
        }
    }

    /// The value made finite: NaN becomes 0, infinities `±f32::MAX`.
    pub fn finite(self, lo: f32, hi: f32) -> f32 {
        finite(self.any(lo, hi))
    }
}

pub fn finite(v: f32) -> f32 {
    if v.is_nan() {
        0.0
    } else {
        v.clamp(-f32::MAX, f32::MAX)
    }
}

/// Exact values that break arithmetic: zeros of both signs, subnormals,
/// `±f32::MAX`, the bounds `lo` and `hi`, the split lines between them (of
/// levels 0 to 7) and their neighbours one unit in the last place away.
pub fn special(lo: f32, hi: f32, sel: u8, k: u8) -> f32 {
    let tiny = f32::from_bits(1);
    let split = || {
        let level = i32::from(k % 8);
        let j = f64::from(k / 8) % f64::from(1u32 << level);
        let t = (2.0 * j + 1.0) / f64::from(1u32 << (level + 1));
        clamp_f32(f64::from(lo) + (f64::from(hi) - f64::from(lo)) * t)
    };
    match sel % 16 {
        0 => 0.0,
        1 => -0.0,
        2 => tiny,
        3 => -tiny,
        4 => f32::MIN_POSITIVE,
        5 => f32::MAX,
        6 => -f32::MAX,
        7 => lo,
        8 => hi,
        9 | 10 => split(),
        11 => split().next_up(),
        12 => split().next_down(),
        13 => tiny * f32::from(k),
        14 => lo.next_down(),
        _ => hi.next_up(),
    }
}

/// `v` as the nearest finite `f32`.
pub fn clamp_f32(v: f64) -> f32 {
    finite(v as f32)
}

/// The valid box spanning two finite corners, whichever is lower.
pub fn repaired_box(a: [f32; 2], b: [f32; 2]) -> Aabb {
    let (a, b) = (Vec2::from(a), Vec2::from(b));
    Aabb::new([a.x.min(b.x), a.y.min(b.y)], [a.x.max(b.x), a.y.max(b.y)])
}

static NAME: OnceLock<&'static str> = OnceLock::new();
static INPUTS: AtomicU64 = AtomicU64::new(0);
static OPS: AtomicU64 = AtomicU64::new(0);

unsafe extern "C" {
    fn atexit(f: extern "C" fn()) -> i32;
}

extern "C" fn report() {
    let name = NAME.get().copied().unwrap_or("fuzz");
    eprintln!(
        "{name}: {} operations in {} inputs",
        OPS.load(Ordering::Relaxed),
        INPUTS.load(Ordering::Relaxed)
    );
}

/// Counts one input; the first call arranges for the totals to be printed
/// at exit.
pub fn count_input(name: &'static str) {
    if NAME.set(name).is_ok() {
        // SAFETY: `report` is a plain function that lives for the whole
        // program.
        unsafe {
            atexit(report);
        }
    }
    INPUTS.fetch_add(1, Ordering::Relaxed);
}

/// Counts one operation.
pub fn count_op() {
    OPS.fetch_add(1, Ordering::Relaxed);
}

/// A configuration: the default, or any in range (`max_items` 1 to 40,
/// `max_depth` 0 to 24).
#[derive(Arbitrary, Debug)]
pub enum ConfigIn {
    Default,
    Custom { max_items: u8, max_depth: u8 },
}

impl ConfigIn {
    pub fn resolve(&self) -> Config {
        match *self {
            ConfigIn::Default => Config::default(),
            ConfigIn::Custom {
                max_items,
                max_depth,
            } => Config {
                max_items: 1 + usize::from(max_items) % 40,
                max_depth: max_depth % 25,
                ..Config::default()
            },
        }
    }
}
