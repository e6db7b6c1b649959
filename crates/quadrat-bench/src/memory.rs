//! Heap use of each index at `settings.query_n` boxes with a `u32` payload:
//! the peak while it is built from a slice of boxes, and what it holds once
//! built. Every library is built the way its documentation shows, with its
//! own element type and nothing of the benchmark's adapters (which keep
//! extra copies for the exactness fixes), and measured by the same counting
//! allocator ([`crate::alloc`]).

use quadrat::scenario::Layout;
use quadrat::{Aabb, QuadTree};

use super::implementation::Implementation;
use super::progress::Progress;
use super::scene::Scene;
use super::{Results, Settings};
use crate::alloc::{Usage, measure};

/// One implementation's heap use.
#[derive(Clone, Copy, Debug)]
pub(super) struct MemoryRecord {
    /// The implementation.
    pub(super) implementation: Implementation,
    /// Number of boxes.
    pub(super) n: usize,
    /// Peak and retained bytes.
    pub(super) usage: Usage,
}

/// The implementations whose memory is measured: quadrat (once: the
/// parallel variant is the same tree) and the tree-shaped peers.
pub(super) fn participants(implementations: &[Implementation]) -> Vec<Implementation> {
    implementations
        .iter()
        .copied()
        .filter(|i| {
            let known = matches!(i, Implementation::Quadrat);
            #[cfg(feature = "peers")]
            let known = known
                || matches!(
                    i,
                    Implementation::Rstar | Implementation::Broccoli | Implementation::Parry
                );
            known
        })
        .collect()
}

/// Measures every participant; says so in the report when the counting
/// allocator is not installed.
pub(super) fn run(settings: &Settings, progress: &Progress, results: &mut Results) {
    let n = settings.query_n;
    let scene = Scene::new(Layout::Uniform, n, settings.seed);
    let mut line = format!("  memory n={}:", super::fmt_n(n));
    for imp in participants(&settings.implementations) {
        progress.start(format!("memory n={}: {}", super::fmt_n(n), imp.name()));
        let usage = usage(imp, &scene);
        progress.finish_step();
        let Some(usage) = usage else {
            results.note(
                super::Part::Memory,
                "Memory was not measured: the counting allocator is not installed.".into(),
            );
            return;
        };
        line += &format!(" {} {:.1} MB", imp.name(), mb(usage.peak));
        results.memory.push(MemoryRecord {
            implementation: imp,
            n,
            usage,
        });
    }
    progress.println(line + " peak");
}

/// Megabytes (10⁶ bytes).
pub(super) fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

/// Builds `imp`'s index over the scene and measures it.
fn usage(imp: Implementation, scene: &Scene) -> Option<Usage> {
    let boxes = &scene.boxes;
    match imp {
        Implementation::Quadrat => {
            measure(|| {
                let mut tree = QuadTree::<u32>::new(Aabb::from(scene.world));
                tree.insert_many(boxes.iter().map(|&b| Aabb::from(b)).zip(0u32..));
                tree
            })
            .1
        }
        #[cfg(feature = "peers")]
        Implementation::Broccoli => {
            measure(|| {
                let mut elems: Vec<(::broccoli::axgeom::Rect<f32>, u32)> = boxes
                    .iter()
                    .zip(0u32..)
                    .map(|(b, i)| (::broccoli::rect(b[0], b[2], b[1], b[3]), i))
                    .collect();
                let data = ::broccoli::Tree::new(&mut elems).get_tree_data();
                (elems, data)
            })
            .1
        }
        #[cfg(feature = "peers")]
        Implementation::Rstar => {
            use ::rstar::primitives::{GeomWithData, Rectangle};
            measure(|| {
                let elems: Vec<GeomWithData<Rectangle<[f32; 2]>, u32>> = boxes
                    .iter()
                    .zip(0u32..)
                    .map(|(b, i)| {
                        GeomWithData::new(Rectangle::from_corners([b[0], b[1]], [b[2], b[3]]), i)
                    })
                    .collect();
                ::rstar::RTree::bulk_load(elems)
            })
            .1
        }
        #[cfg(feature = "peers")]
        Implementation::Parry => {
            use parry2d::bounding_volume::Aabb as ParryAabb;
            use parry2d::math::Vector;
            use parry2d::partitioning::{Bvh, BvhBuildStrategy};
            measure(|| {
                Bvh::from_iter(
                    BvhBuildStrategy::Binned,
                    boxes
                        .iter()
                        .map(|b| ParryAabb::new(Vector::new(b[0], b[1]), Vector::new(b[2], b[3])))
                        .enumerate(),
                )
            })
            .1
        }
        other => unreachable!("{} is not a memory participant", other.name()),
    }
}
