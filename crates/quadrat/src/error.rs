//! The error type for refused input.

use core::fmt;

/// What is wrong with an input that the tree refused.
///
/// Refused input never changes the tree. The `Display` text names the
/// offending field, and is also the panic message of the panicking
/// counterparts ([`QuadTree::insert`](crate::QuadTree::insert) and friends).
///
/// ```
/// use quadrat::{Aabb, Error, QuadTree};
/// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
/// let err = tree.try_insert(Aabb::new([f32::INFINITY, 0.0], [1.0, 1.0]), ()).unwrap_err();
/// assert_eq!(err, Error::NonFinite { field: "min.x", value: f32::INFINITY });
/// assert_eq!(err.to_string(), "min.x is infinite");
/// assert!(tree.is_empty());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A coordinate or length is NaN or infinite.
    NonFinite {
        /// Which field, such as `"min.x"` or `"radius"`.
        field: &'static str,
        /// The offending value.
        value: f32,
    },
    /// A box's minimum is greater than its maximum on one axis.
    Inverted {
        /// `'x'` or `'y'`.
        axis: char,
        /// The box's minimum on that axis.
        min: f32,
        /// The box's maximum on that axis.
        max: f32,
    },
    /// A length that must not be negative is, such as a circle's radius.
    Negative {
        /// Which field.
        field: &'static str,
        /// The offending value.
        value: f32,
    },
    /// A coordinate or size lies beyond the range the collision world
    /// answers exactly: its magnitude exceeds [`WORLD_LIMIT`](crate::WORLD_LIMIT).
    OutOfRange {
        /// Which field, such as `"position.x"` or `"radius"`.
        field: &'static str,
        /// The offending value.
        value: f32,
    },
    /// A ray's direction is the zero vector.
    ZeroDirection,
    /// The key does not name a live item: it was removed, or it belongs to
    /// another tree.
    StaleKey,
    /// A [`Config`](crate::Config) value is out of range.
    InvalidConfig {
        /// Which field.
        field: &'static str,
        /// Why it is refused.
        reason: &'static str,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::NonFinite { field, value } => {
                let what = if value.is_nan() { "NaN" } else { "infinite" };
                write!(f, "{field} is {what}")
            }
            Error::Inverted { axis, min, max } => {
                write!(f, "min.{axis} ({min}) is greater than max.{axis} ({max})")
            }
            Error::Negative { field, value } => write!(f, "{field} ({value}) is negative"),
            Error::OutOfRange { field, value } => write!(
                f,
                "{field} ({value:e}) is beyond the collision world's range of ±{:e}",
                crate::WORLD_LIMIT
            ),
            Error::ZeroDirection => f.write_str("ray direction is zero"),
            Error::StaleKey => {
                f.write_str("key does not name a live item (removed, or from another tree)")
            }
            Error::InvalidConfig { field, reason } => write!(f, "config.{field} {reason}"),
        }
    }
}

impl std::error::Error for Error {}
