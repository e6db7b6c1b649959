//! `glam` interop: `Vec2` converts to and from `glam::Vec2`, so every
//! function taking `impl Into<Vec2>` accepts glam vectors.
//!
//! ```
//! use quadrat::{Aabb, QuadTree};
//! let mut tree = QuadTree::new(Aabb::new(glam::Vec2::ZERO, glam::Vec2::splat(10.0)));
//! tree.insert(Aabb::from_center(glam::vec2(5.0, 5.0), glam::Vec2::ONE), ());
//! assert_eq!(tree.query_point(glam::vec2(5.5, 5.5)).count(), 1);
//! let g: glam::Vec2 = quadrat::Vec2::new(1.0, 2.0).into();
//! assert_eq!(g, glam::vec2(1.0, 2.0));
//! ```

use crate::geom::Vec2;

impl From<glam::Vec2> for Vec2 {
    #[inline]
    fn from(v: glam::Vec2) -> Vec2 {
        Vec2::new(v.x, v.y)
    }
}

impl From<Vec2> for glam::Vec2 {
    #[inline]
    fn from(v: Vec2) -> glam::Vec2 {
        glam::Vec2::new(v.x, v.y)
    }
}
