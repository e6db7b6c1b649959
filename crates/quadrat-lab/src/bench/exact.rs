//! Exactness: every implementation must report exactly the reference's
//! pairs and query hits.

use core::fmt;

/// How one implementation's output differs from the reference's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The implementation that disagrees.
    pub implementation: &'static str,
    /// The implementation that gave the expected result.
    pub reference: &'static str,
    /// Where: benchmark, layout and n.
    pub context: String,
    /// What differs, in words.
    pub detail: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} disagrees with {} on {}: {}",
            self.implementation, self.reference, self.context, self.detail
        )
    }
}

/// Items in one sorted sequence but not in the other, each side counted with
/// multiplicity, plus the first example of each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Diff<T> {
    /// Expected but not found.
    pub(crate) missing: usize,
    /// Found but not expected (including duplicates).
    pub(crate) extra: usize,
    /// The smallest missing item.
    pub(crate) first_missing: Option<T>,
    /// The smallest extra item.
    pub(crate) first_extra: Option<T>,
}

impl<T: fmt::Debug> fmt::Display for Diff<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} missing", self.missing)?;
        if let Some(m) = &self.first_missing {
            write!(f, " (first {m:?})")?;
        }
        write!(f, ", {} extra", self.extra)?;
        if let Some(e) = &self.first_extra {
            write!(f, " (first {e:?})")?;
        }
        Ok(())
    }
}

/// Compares two sorted sequences; `None` when they are equal.
#[must_use]
pub(crate) fn diff_sorted<T: Ord + Copy>(expected: &[T], got: &[T]) -> Option<Diff<T>> {
    if expected == got {
        return None;
    }
    let mut d = Diff {
        missing: 0,
        extra: 0,
        first_missing: None,
        first_extra: None,
    };
    let (mut i, mut j) = (0, 0);
    while i < expected.len() || j < got.len() {
        let take_expected = match (expected.get(i), got.get(j)) {
            (Some(a), Some(b)) if a == b => {
                i += 1;
                j += 1;
                continue;
            }
            (Some(a), Some(b)) => a < b,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if take_expected {
            d.missing += 1;
            d.first_missing.get_or_insert(expected[i]);
            i += 1;
        } else {
            d.extra += 1;
            d.first_extra.get_or_insert(got[j]);
            j += 1;
        }
    }
    Some(d)
}

/// Compares per-query hit lists (each sorted); describes the first query
/// that differs and how many do, or `None` when all agree.
#[must_use]
pub(crate) fn diff_queries(expected: &[Vec<u32>], got: &[Vec<u32>]) -> Option<String> {
    if expected.len() != got.len() {
        return Some(format!(
            "{} query results expected, {} given",
            expected.len(),
            got.len()
        ));
    }
    let mut differing = expected
        .iter()
        .zip(got)
        .enumerate()
        .filter_map(|(k, (e, g))| diff_sorted(e, g).map(|d| (k, d)));
    let (first, d) = differing.next()?;
    let more = differing.count();
    Some(format!(
        "{} of {} queries differ; query #{first}: {d}",
        more + 1,
        expected.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_sequences_have_no_diff() {
        assert_eq!(diff_sorted(&[(0, 1), (2, 3)], &[(0, 1), (2, 3)]), None);
        assert_eq!(diff_sorted::<u32>(&[], &[]), None);
    }

    #[test]
    fn diff_counts_missing_extra_and_duplicates() {
        let d = diff_sorted(&[1, 2, 3, 5], &[2, 2, 4, 5, 6]).unwrap();
        assert_eq!((d.missing, d.extra), (2, 3));
        assert_eq!((d.first_missing, d.first_extra), (Some(1), Some(2)));
        assert_eq!(d.to_string(), "2 missing (first 1), 3 extra (first 2)");
    }

    #[test]
    fn query_diff_names_the_first_differing_query() {
        let e = vec![vec![1, 2], vec![3], vec![]];
        let g = vec![vec![1, 2], vec![], vec![7]];
        assert_eq!(diff_queries(&e, &e), None);
        assert_eq!(
            diff_queries(&e, &g).unwrap(),
            "2 of 3 queries differ; query #1: 1 missing (first 3), 0 extra"
        );
    }
}
