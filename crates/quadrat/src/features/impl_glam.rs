//! `glam` interop: `Vec2` converts to and from `glam::Vec2` of each glam
//! version that has a feature (`glam-0_27` to `glam-0_34`, with `glam` the
//! newest), so every function taking `impl Into<Vec2>` accepts glam
//! vectors of the engine's glam.
//!
//! Each version is a dependency of its own, renamed after its version
//! (`glam027` is glam 0.27), so several can be on at once: their `Vec2`s
//! are distinct types, and each gets its own pair of `From` impls.

/// The two `From` impls between [`Vec2`](crate::Vec2) and `$glam::Vec2`, each behind
/// `$feature` (so the docs show which feature adds it), with a doc example
/// that runs when the feature is on.
macro_rules! glam_conversions {
    ($glam:ident, $feature:literal, $version:literal) => {
        #[cfg(feature = $feature)]
        #[doc = concat!("A glam ", $version, " vector as a quadrat vector (feature `", $feature, "`).")]
        ///
        /// ```
        #[doc = concat!("# use ", stringify!($glam), " as glam;")]
        /// use quadrat::{Aabb, QuadTree};
        /// let mut tree = QuadTree::new(Aabb::new(glam::Vec2::ZERO, glam::Vec2::splat(10.0)));
        /// tree.insert(Aabb::from_center(glam::vec2(5.0, 5.0), glam::Vec2::ONE), ());
        /// assert_eq!(tree.query_point(glam::vec2(5.5, 5.5)).count(), 1);
        /// let v: quadrat::Vec2 = glam::vec2(1.0, 2.0).into();
        /// assert_eq!(v, quadrat::Vec2::new(1.0, 2.0));
        /// ```
        impl From<$glam::Vec2> for crate::Vec2 {
            #[inline]
            fn from(v: $glam::Vec2) -> crate::Vec2 {
                crate::Vec2::new(v.x, v.y)
            }
        }

        #[cfg(feature = $feature)]
        #[doc = concat!("A quadrat vector as a glam ", $version, " vector (feature `", $feature, "`).")]
        ///
        /// ```
        #[doc = concat!("# use ", stringify!($glam), " as glam;")]
        /// let g: glam::Vec2 = quadrat::Vec2::new(1.0, 2.0).into();
        /// assert_eq!(g, glam::vec2(1.0, 2.0));
        /// ```
        impl From<crate::Vec2> for $glam::Vec2 {
            #[inline]
            fn from(v: crate::Vec2) -> $glam::Vec2 {
                $glam::Vec2::new(v.x, v.y)
            }
        }
    };
}

glam_conversions!(glam027, "glam-0_27", "0.27");
glam_conversions!(glam029, "glam-0_29", "0.29");
glam_conversions!(glam030, "glam-0_30", "0.30");
glam_conversions!(glam032, "glam-0_32", "0.32");
glam_conversions!(glam033, "glam-0_33", "0.33");
glam_conversions!(glam034, "glam-0_34", "0.34");
