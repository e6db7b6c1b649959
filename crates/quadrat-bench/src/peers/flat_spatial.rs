//! [`flat_spatial`]'s `AABBGrid`: a sparse uniform grid of cells, each listing
//! the boxes that overlap it.
//!
//! The grid has no all-pairs routine, so pairs come from one query per box,
//! keeping hits with a larger index.
//!
//! Semantics: cell lookup maps coordinates to cells monotonically (integer
//! cell size, `as i32` truncation), so the broad candidate set of
//! `query_broad_visitor` never misses a box whose closed extent reaches the
//! query. The exact step of `query` / `query_visitor`, however, tests
//! `|(a.min + a.max) - (b.min + b.max)| <= widths` in `f32`, where rounding
//! can drop touching boxes (and admit boxes a rounding error apart). The
//! adapter therefore uses `query_broad_visitor` and applies the exact closed
//! test itself.
//!
//! A query box lying inside a single cell that no box has ever touched makes
//! `query_broad_visitor` (and `query_visitor`) panic on an `unwrap`; the
//! adapter checks for that case and returns no hits.
//!
//! Updates move each box with `set_aabb`, which only touches the grid when
//! the box's cell range changes.

use ::flat_spatial::AABBGrid;
use ::flat_spatial::aabbgrid::AABBGridHandle;

use super::{Bbox, BroadPhase, intersects};

/// A box in the representation flat_spatial expects.
#[derive(Clone, Copy, Debug)]
struct GridBox(Bbox);

impl ::flat_spatial::AABB for GridBox {
    type V2 = [f32; 2];

    fn ll(&self) -> [f32; 2] {
        [self.0[0], self.0[1]]
    }

    fn ur(&self) -> [f32; 2] {
        [self.0[2], self.0[3]]
    }
}

/// Cell side as a multiple of the mean box side, chosen by measurement on
/// uniform squares (build + pairs): at 10k boxes every cell side from 14 to
/// 40 was within noise (this rule gives 35); at 100k the best was 11 (the
/// rule gives 11), with 8 to 17 within 13%. Small cells are costly because a
/// query spanning several cells allocates a hash set to deduplicate.
const CELL_FACTOR: f32 = 4.0;

/// A flat_spatial `AABBGrid` plus the handle of each box.
pub struct FlatSpatial {
    grid: AABBGrid<u32, GridBox>,
    handles: Vec<AABBGridHandle>,
    boxes: Vec<Bbox>,
}

impl FlatSpatial {
    /// Builds a grid with an explicit integer cell side.
    pub fn with_cell_size(boxes: &[Bbox], cell_size: i32) -> Self {
        let mut grid = AABBGrid::new(cell_size);
        let handles = boxes
            .iter()
            .enumerate()
            .map(|(i, &b)| grid.insert(GridBox(b), i as u32))
            .collect();
        Self {
            grid,
            handles,
            boxes: boxes.to_vec(),
        }
    }

    /// The cell side used by [`BroadPhase::build`]: 4 times the
    /// mean of the boxes' larger sides, rounded, at least 1.
    pub fn default_cell_size(boxes: &[Bbox]) -> i32 {
        if boxes.is_empty() {
            return 1;
        }
        let mean = boxes
            .iter()
            .map(|b| f64::from((b[2] - b[0]).max(b[3] - b[1])))
            .sum::<f64>()
            / boxes.len() as f64;
        ((mean * f64::from(CELL_FACTOR)).round() as i32).max(1)
    }
}

impl BroadPhase for FlatSpatial {
    const NAME: &'static str = "flat_spatial";
    const INCREMENTAL: bool = true;

    fn build(_world: Bbox, boxes: &[Bbox]) -> Self {
        Self::with_cell_size(boxes, Self::default_cell_size(boxes))
    }

    fn pairs_into(&mut self, out: &mut Vec<(u32, u32)>) {
        let grid = &self.grid;
        let boxes = &self.boxes;
        for (i, a) in boxes.iter().enumerate() {
            let i = i as u32;
            grid.query_broad_visitor(GridBox(*a), |h| {
                let j = grid.get(h).expect("handle from the grid").obj;
                if i < j && intersects(a, &boxes[j as usize]) {
                    out.push((i, j));
                }
            });
        }
    }

    fn query(&mut self, area: Bbox, out: &mut Vec<u32>) {
        let grid = &self.grid;
        let boxes = &self.boxes;
        // `query_broad_visitor` unwraps the cell when the query lies in a
        // single cell, and panics if no box ever touched that cell.
        let storage = grid.storage();
        let cell = storage.cell_id([area[0], area[1]]);
        if cell == storage.cell_id([area[2], area[3]]) && storage.cell(cell).is_none() {
            return;
        }
        grid.query_broad_visitor(GridBox(area), |h| {
            let j = grid.get(h).expect("handle from the grid").obj;
            if intersects(&area, &boxes[j as usize]) {
                out.push(j);
            }
        });
    }

    fn update(&mut self, _world: Bbox, boxes: &[Bbox]) {
        for ((&h, b), new) in self.handles.iter().zip(&mut self.boxes).zip(boxes) {
            *b = *new;
            self.grid.set_aabb(h, GridBox(*new));
        }
    }
}
