//! Brute force: every pair tested. `O(n²)`; the oracle.

use super::{Bbox, BroadPhase, intersects};

/// A plain list of boxes; every query scans all of them.
#[derive(Clone, Debug, Default)]
pub struct Brute {
    boxes: Vec<Bbox>,
}

impl BroadPhase for Brute {
    const NAME: &'static str = "brute";
    const INCREMENTAL: bool = true;

    fn build(_world: Bbox, boxes: &[Bbox]) -> Self {
        Self {
            boxes: boxes.to_vec(),
        }
    }

    fn pairs_into(&mut self, out: &mut Vec<(u32, u32)>) {
        for (i, a) in self.boxes.iter().enumerate() {
            for (j, b) in self.boxes.iter().enumerate().skip(i + 1) {
                if intersects(a, b) {
                    out.push((i as u32, j as u32));
                }
            }
        }
    }

    fn query(&mut self, area: Bbox, out: &mut Vec<u32>) {
        out.extend(
            self.boxes
                .iter()
                .enumerate()
                .filter(|(_, b)| intersects(&area, b))
                .map(|(i, _)| i as u32),
        );
    }

    /// Copies the new boxes.
    fn update(&mut self, _world: Bbox, boxes: &[Bbox]) {
        self.boxes.clear();
        self.boxes.extend_from_slice(boxes);
    }
}
