//! `mint` interop: `Vec2` converts to and from `mint::Point2<f32>` and
//! `mint::Vector2<f32>`, the common currency of math crates.
//!
//! ```
//! use quadrat::Vec2;
//! let p: Vec2 = mint::Point2 { x: 1.0, y: 2.0 }.into();
//! let v: mint::Vector2<f32> = p.into();
//! assert_eq!((v.x, v.y), (1.0, 2.0));
//! ```

use crate::geom::Vec2;

impl From<mint::Point2<f32>> for Vec2 {
    #[inline]
    fn from(p: mint::Point2<f32>) -> Vec2 {
        Vec2::new(p.x, p.y)
    }
}

impl From<Vec2> for mint::Point2<f32> {
    #[inline]
    fn from(v: Vec2) -> mint::Point2<f32> {
        mint::Point2 { x: v.x, y: v.y }
    }
}

impl From<mint::Vector2<f32>> for Vec2 {
    #[inline]
    fn from(p: mint::Vector2<f32>) -> Vec2 {
        Vec2::new(p.x, p.y)
    }
}

impl From<Vec2> for mint::Vector2<f32> {
    #[inline]
    fn from(v: Vec2) -> mint::Vector2<f32> {
        mint::Vector2 { x: v.x, y: v.y }
    }
}
