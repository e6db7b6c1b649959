//! # quadrat
//!
//! Fast, correct quadtrees for 2D collision detection.
//!
//! Checking every pair of `n` moving objects costs `n²` tests a frame. A
//! [`QuadTree`] splits the world into four quadrants, and again where
//! objects crowd, so that only neighbours are compared.
//!
//! - [`QuadTree<T>`]: boxes with values, addressed by stable generational
//!   [`Key`]s; insert, remove (collapsing empty quadrants), update (moving
//!   objects), clear; area, circle and point queries; every colliding pair
//!   exactly once.
//! - [`Vec2`], [`Aabb`], [`Circle`], [`Ray`]: small `Copy` geometry types.
//!   Boxes are **closed**: touching counts as intersecting.
//! - [`Shape`] (circle, box, point, capsule) at a position: exact
//!   [`contact`](Shape::contact) (normal and depth), [`intersects`](Shape::intersects),
//!   point queries and ray casts — the narrow phase that runs on each pair
//!   the tree finds.
//! - [`CollisionWorld`]: bodies with shapes, positions and a collision
//!   [`Filter`] (the [`Layers`] a body is on and those it collides with);
//!   [`step`](CollisionWorld::step) runs the broad phase on a quadtree and
//!   the exact test on each candidate pair, and reports the contacts plus
//!   the pairs that **began** and **ended** touching since the last step.
//!   [`add_many`](CollisionWorld::add_many) and
//!   [`set_positions`](CollisionWorld::set_positions) add and move bodies in
//!   batches, all or nothing. Shape overlap, point picking, nearest and ray
//!   casts with a [`Layers`] mask.
//!
//! ## The game loop
//!
//! Every frame: move the objects (or clear and insert them all again), ask
//! for the pairs whose boxes touch, and run the exact test on each.
//!
//! ```
//! use quadrat::{Aabb, Circle, QuadTree, Vec2};
//!
//! struct Ball { pos: Vec2, vel: Vec2, r: f32 }
//!
//! let mut balls: Vec<Ball> = (0..200)
//!     .map(|i| {
//!         let t = i as f32;
//!         Ball {
//!             pos: Vec2::new((t * 12.9898).sin().abs() * 640.0, (t * 78.233).cos().abs() * 480.0),
//!             vel: Vec2::new((t * 0.37).sin(), (t * 0.73).cos()),
//!             r: 6.0,
//!         }
//!     })
//!     .collect();
//!
//! let world = Aabb::new([0.0, 0.0], [640.0, 480.0]);
//! let mut tree = QuadTree::new(world);
//! let bounds = |b: &Ball| Aabb::from_center(b.pos, [b.r, b.r]);
//! let keys: Vec<_> = balls.iter().enumerate().map(|(i, b)| tree.insert(bounds(b), i)).collect();
//!
//! for _frame in 0..10 {
//!     // 1. Move everything and tell the tree (or: tree.clear() and insert all again).
//!     for (ball, &key) in balls.iter_mut().zip(&keys) {
//!         ball.pos += ball.vel;
//!         tree.update(key, bounds(ball));
//!     }
//!     // 2. Broad phase: pairs whose boxes touch, each once.
//!     let (mut candidates, mut touching) = (0, 0);
//!     tree.for_each_pair(|a, b| {
//!         candidates += 1;
//!         // 3. Narrow phase: the exact test on each candidate pair.
//!         let (ba, bb) = (&balls[tree[a]], &balls[tree[b]]);
//!         if Circle::new(ba.pos, ba.r).intersects_circle(&Circle::new(bb.pos, bb.r)) {
//!             touching += 1;
//!         }
//!     });
//!     // The same count as testing every pair of balls, from far fewer tests.
//!     let circle = |b: &Ball| Circle::new(b.pos, b.r);
//!     let brute_force = (0..balls.len())
//!         .flat_map(|i| (i + 1..balls.len()).map(move |j| (i, j)))
//!         .filter(|&(i, j)| circle(&balls[i]).intersects_circle(&circle(&balls[j])))
//!         .count();
//!     assert_eq!(touching, brute_force);
//!     assert!(candidates < balls.len() * (balls.len() - 1) / 2 / 50);
//! }
//! # tree.validate().unwrap();
//! ```

//! ## Features
//!
//! All off by default; the default build has no dependencies.
//!
//! | feature | adds |
//! |---|---|
//! | `parallel` | `QuadTree::par_insert_many`, `par_rebuild` and `par_update_all` (bulk builds on rayon's thread pool), `par_for_each_pair` and `par_pairs` (pairs on it) |
//! | `glam-0_27`, `glam-0_29`, `glam-0_30`, `glam-0_32`, `glam-0_33`, `glam-0_34` | `From` conversions both ways between [`Vec2`] and `glam::Vec2` of that glam version (table below) |
//! | `glam` | the newest of these, `glam-0_34` |
//! | `mint` | conversions between [`Vec2`] and `mint::Point2` / `mint::Vector2` |
//! | `serde` | `Serialize` / `Deserialize` for the geometry types, [`Shape`], [`Key`], [`Config`], [`Body`], [`Filter`], [`Layers`] and [`ContactPair`]; snapshots of whole [`QuadTree`]s and [`CollisionWorld`]s that restore exactly |

#![deny(missing_docs)]
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
mod features;
mod geom;
mod key;
mod lanes;
mod narrow;
mod prefetch;
#[doc(hidden)]
pub mod scenario;
mod shape;
mod tree;
mod world;

pub use crate::error::Error;
pub use crate::geom::{Aabb, Circle, Ray, Vec2};
pub use crate::key::Key;
pub use crate::shape::{Contact, RayHit, Shape};
pub use crate::tree::{Config, MAX_DEPTH, NodeView, PairStats, QuadTree, Query, Region};
pub use crate::world::{Body, CollisionWorld, ContactPair, Events, Filter, Layers, WORLD_LIMIT};

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The package README's examples (the crate's page on crates.io), compiled
/// and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct PackageReadmeDoctests;
