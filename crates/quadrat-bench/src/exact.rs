//! Exactness: every implementation must report exactly the reference's
//! pairs and query hits, and the reference's nearest boxes up to ties.

use core::fmt;

use super::probe::by_distance;

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

/// Compares per-query answers of nearest boxes, `(box, distance)`: in
/// `expected` ascending by distance, then box; in `got` in any order.
/// `distance(query, box)` measures a box exactly as the reference does.
///
/// An answer agrees when its distances, sorted, equal the expected ones as
/// `f32` values, every box lies at exactly the distance given for it, no box
/// comes twice, and the boxes nearer than the last distance are the expected
/// ones. Only among the boxes at the last distance may it choose others,
/// when more boxes lie at that distance than the answer has room for (a
/// tie). Returns how many answers resolved such a tie with other boxes, or
/// describes the first answer that differs and how many do.
pub(crate) fn diff_nearest(
    expected: &[Vec<(u32, f32)>],
    got: &[Vec<(u32, f32)>],
    distance: impl Fn(usize, u32) -> Option<f32>,
) -> Result<usize, String> {
    if expected.len() != got.len() {
        return Err(format!(
            "{} query results expected, {} given",
            expected.len(),
            got.len()
        ));
    }
    let mut ties = 0;
    let mut differing = Vec::new();
    for (q, (e, g)) in expected.iter().zip(got).enumerate() {
        match diff_answer(e, g, |i| distance(q, i)) {
            Ok(tie) => ties += usize::from(tie),
            Err(detail) => differing.push((q, detail)),
        }
    }
    match differing.first() {
        None => Ok(ties),
        Some((q, detail)) => Err(format!(
            "{} of {} queries differ; query #{q}: {detail}",
            differing.len(),
            expected.len()
        )),
    }
}

/// One answer of [`diff_nearest`]: `Ok(true)` when it agrees but chose other
/// boxes at the last distance.
fn diff_answer(
    expected: &[(u32, f32)],
    got: &[(u32, f32)],
    distance: impl Fn(u32) -> Option<f32>,
) -> Result<bool, String> {
    let mut got = got.to_vec();
    got.sort_unstable_by(by_distance);
    if got.len() != expected.len() {
        return Err(format!(
            "{} boxes expected, {} given",
            expected.len(),
            got.len()
        ));
    }
    if let Some(i) = (0..got.len()).find(|&i| got[i].1 != expected[i].1) {
        return Err(format!(
            "distance #{i} differs: {:?} expected, {:?} given",
            expected[i], got[i]
        ));
    }
    if let Some(&(i, d)) = got.iter().find(|&&(i, d)| distance(i) != Some(d)) {
        return Err(format!(
            "box {i} given at {d:?}, but its distance is {:?}",
            distance(i)
        ));
    }
    let Some(&(_, last)) = expected.last() else {
        return Ok(false);
    };
    let ids = |answer: &[(u32, f32)], keep: &dyn Fn(f32) -> bool| -> Vec<u32> {
        let mut ids: Vec<u32> = answer
            .iter()
            .filter(|&&(_, d)| keep(d))
            .map(|&(i, _)| i)
            .collect();
        ids.sort_unstable();
        ids
    };
    let all = ids(&got, &|_| true);
    if let Some(w) = all.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("box {} given twice", w[0]));
    }
    let nearer = |d: f32| d < last;
    if let Some(d) = diff_sorted(&ids(expected, &nearer), &ids(&got, &nearer)) {
        return Err(format!("boxes nearer than {last:?}: {d}"));
    }
    let at = |d: f32| d == last;
    Ok(ids(expected, &at) != ids(&got, &at))
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

    #[test]
    fn nearest_answers_may_differ_only_at_a_tie_of_the_last_distance() {
        // Boxes 0 to 4 at distances 1, 2, 2, 2, 3.
        let dist = [1.0, 2.0, 2.0, 2.0, 3.0];
        let distance = |_: usize, i: u32| dist.get(i as usize).copied();
        let e = vec![vec![(0, 1.0), (1, 2.0), (2, 2.0)]];
        let check = |g: Vec<(u32, f32)>| diff_nearest(&e, &[g], distance);
        assert_eq!(check(vec![(2, 2.0), (0, 1.0), (1, 2.0)]), Ok(0));
        assert_eq!(check(vec![(0, 1.0), (3, 2.0), (1, 2.0)]), Ok(1));
        let err = |g| check(g).unwrap_err();
        assert_eq!(
            err(vec![(0, 1.0), (1, 2.0)]),
            "1 of 1 queries differ; query #0: 3 boxes expected, 2 given"
        );
        assert!(err(vec![(0, 1.0), (1, 2.0), (4, 3.0)]).contains("distance #2 differs"));
        assert!(err(vec![(0, 1.0), (1, 2.0), (4, 2.0)]).contains("box 4 given at 2.0"));
        assert!(err(vec![(0, 1.0), (1, 2.0), (1, 2.0)]).contains("box 1 given twice"));
        // Box 5 lies at distance 1 too, but only the last distance may tie.
        let e = vec![vec![(0, 1.0), (1, 2.0)]];
        let distance = |_: usize, i: u32| Some(if i == 5 { 1.0 } else { dist[i as usize] });
        let g = vec![vec![(5, 1.0), (1, 2.0)]];
        assert!(
            diff_nearest(&e, &g, distance)
                .unwrap_err()
                .contains("boxes nearer than 2.0")
        );
    }
}
