//! Scenes full of edge cases, shared by the exactness tests.

use quadrat::scenario::Rng;
use quadrat_bench::peers::Bbox;

/// Side of the square world the scenes lie in (mostly).
pub(crate) const WORLD: f32 = 1000.0;

/// A uniform index in `0..len`.
pub(crate) fn pick(rng: &mut Rng, len: usize) -> usize {
    rng.below(len as u64) as usize
}

/// A scene of `n` boxes full of edge cases.
///
/// It mixes uniformly placed boxes of random size with boxes that exactly
/// touch another box along an edge or at a corner, zero-size boxes (points),
/// zero-width and zero-height boxes (segments), points on other boxes'
/// boundaries, exact duplicates, and boxes snapped to an integer lattice,
/// where exact contacts are common. Some boxes stick out of the world.
pub(crate) fn edge_cases(n: usize, seed: u64) -> Vec<Bbox> {
    let mut rng = Rng::new(seed);
    let mut boxes: Vec<Bbox> = Vec::with_capacity(n);
    while boxes.len() < n {
        let kind = if boxes.is_empty() { 0 } else { rng.below(10) };
        let b = match kind {
            // Random box of random size.
            0..=2 => {
                let w = rng.range(0.0, 30.0);
                let h = rng.range(0.0, 30.0);
                let x = rng.range(0.0, WORLD - w);
                let y = rng.range(0.0, WORLD - h);
                [x, y, x + w, y + h]
            }
            // Box touching an existing one along an edge or at a corner.
            3 | 4 => {
                let a = boxes[pick(&mut rng, boxes.len())];
                let w = rng.range(0.0, 20.0);
                let h = rng.range(0.0, 20.0);
                let y = rng.range(a[1] - h, a[3]);
                let x = rng.range(a[0] - w, a[2]);
                match rng.below(6) {
                    0 => [a[2], y, a[2] + w, y + h],
                    1 => [a[0] - w, y, a[0], y + h],
                    2 => [x, a[3], x + w, a[3] + h],
                    3 => [x, a[1] - h, x + w, a[1]],
                    4 => [a[2], a[3], a[2] + w, a[3] + h],
                    _ => [a[0] - w, a[1] - h, a[0], a[1]],
                }
            }
            // Zero-size box, anywhere or on another box's corner or edge.
            5 => {
                let a = boxes[pick(&mut rng, boxes.len())];
                let (x, y) = match rng.below(3) {
                    0 => (rng.range(0.0, WORLD), rng.range(0.0, WORLD)),
                    1 => (a[pick(&mut rng, 2) * 2], a[1 + pick(&mut rng, 2) * 2]),
                    _ => (a[2], rng.range(a[1], a[3])),
                };
                [x, y, x, y]
            }
            // Zero-width or zero-height segment.
            6 => {
                let x = rng.range(0.0, WORLD - 20.0);
                let y = rng.range(0.0, WORLD - 20.0);
                let l = rng.range(0.0, 20.0);
                if rng.below(2) == 0 {
                    [x, y, x, y + l]
                } else {
                    [x, y, x + l, y]
                }
            }
            // Exact duplicate.
            7 => boxes[pick(&mut rng, boxes.len())],
            // Lattice boxes: integer coordinates, many exact contacts.
            _ => {
                let x = rng.below(100) as f32 * 10.0;
                let y = rng.below(100) as f32 * 10.0;
                let w = rng.below(3) as f32 * 10.0;
                let h = rng.below(3) as f32 * 10.0;
                [x, y, x + w, y + h]
            }
        };
        boxes.push(b);
    }
    boxes
}
