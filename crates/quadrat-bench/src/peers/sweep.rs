//! Sort and sweep on the x axis: the simple baseline every spatial index
//! should beat.

use super::{Bbox, BroadPhase, intersects, ordered};

/// A box with its original index, stored in sweep order.
#[derive(Clone, Copy, Debug)]
struct Entry {
    b: Bbox,
    id: u32,
}

/// Boxes sorted by `min_x`.
///
/// All pairs: for each box, walk forward while the next box starts at or
/// before this box's `max_x`, and test the y intervals; closed by
/// construction. Queries binary-search the first box whose `min_x` could
/// reach the query, using the widest box as the look-back bound.
#[derive(Clone, Debug, Default)]
pub struct Sweep {
    entries: Vec<Entry>,
    /// An upper bound on every box's width.
    max_width: f32,
}

impl Sweep {
    fn sort(&mut self) {
        // After `update` the entries keep the previous order, which is nearly
        // sorted after small motions. The unstable sort measured faster than
        // the run-detecting stable sort on such input (2.4 ms against 3.5 ms
        // at 100k boxes).
        self.entries
            .sort_unstable_by(|a, b| a.b[0].total_cmp(&b.b[0]));
        self.max_width = self
            .entries
            .iter()
            .map(|e| (e.b[2] - e.b[0]).next_up())
            .fold(0.0, f32::max);
    }
}

impl BroadPhase for Sweep {
    const NAME: &'static str = "sweep";
    const INCREMENTAL: bool = true;

    fn build(_world: Bbox, boxes: &[Bbox]) -> Self {
        let mut s = Self {
            entries: boxes
                .iter()
                .enumerate()
                .map(|(i, &b)| Entry { b, id: i as u32 })
                .collect(),
            max_width: 0.0,
        };
        s.sort();
        s
    }

    fn pairs_into(&mut self, out: &mut Vec<(u32, u32)>) {
        let e = &self.entries;
        for (k, a) in e.iter().enumerate() {
            for b in &e[k + 1..] {
                if b.b[0] > a.b[2] {
                    break;
                }
                if a.b[1] <= b.b[3] && b.b[1] <= a.b[3] {
                    out.push(ordered(a.id, b.id));
                }
            }
        }
    }

    fn query(&mut self, area: Bbox, out: &mut Vec<u32>) {
        // Any box starting before `reach` ends before `area[0]`. `max_width`
        // and `reach` are rounded outwards so this holds exactly.
        let reach = (area[0] - self.max_width).next_down();
        let start = self.entries.partition_point(|e| e.b[0] < reach);
        for e in &self.entries[start..] {
            if e.b[0] > area[2] {
                break;
            }
            if intersects(&e.b, &area) {
                out.push(e.id);
            }
        }
    }

    /// Rewrites the boxes in the current sweep order and re-sorts that nearly
    /// sorted sequence.
    fn update(&mut self, _world: Bbox, boxes: &[Bbox]) {
        for e in &mut self.entries {
            e.b = boxes[e.id as usize];
        }
        self.sort();
    }
}
