//! The results as Markdown tables and as CSV.

use core::fmt::Write as _;

use quadrat::scenario::Layout;

use super::implementation::Implementation;
use super::record::{Benchmark, Record};
use super::scene::{Motion, QueryKind};
use super::{Part, Results, Settings};

/// The CSV header; one line per [`Record`] follows.
const CSV_HEADER: &str =
    "benchmark,layout,n,implementation,median_ms,samples,extrapolated,count,queries,queries_per_s";

/// Every record as CSV, with [`CSV_HEADER`].
pub(super) fn csv(records: &[Record]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in records {
        let _ = writeln!(
            s,
            "{},{},{},{},{:.6},{},{},{},{},{}",
            r.benchmark.name(),
            r.layout.name(),
            r.n,
            r.implementation.name(),
            r.millis(),
            r.samples,
            r.extrapolated,
            r.count,
            r.queries,
            r.queries_per_second()
                .map_or_else(String::new, |q| format!("{q:.0}")),
        );
    }
    s
}

/// The tables of every benchmark that has records.
pub(super) fn markdown(settings: &Settings, results: &Results) -> String {
    let records = &results.records;
    let mut s = String::from("# quadrat-bench\n\n");
    let _ = writeln!(
        s,
        "Seeded scenes from `quadrat::scenario` (a 1000 × 1000 world; the uniform layout \
         has about 3 overlaps per box), seed {}, on {} cores. Before it was timed, every \
         implementation was checked to report exactly the reference's pairs or hits (brute \
         force where affordable, else sort and sweep). Times are medians in milliseconds; \
         **× fastest peer** is the time over that of the fastest implementation other than \
         quadrat, and **brute force ÷** is brute force's time over this one (the speed-up).",
        settings.seed,
        std::thread::available_parallelism().map_or(1, usize::from),
    );
    summary_section(&mut s, settings, results);
    pairs_section(&mut s, settings, records);
    notes(&mut s, results, Part::Pairs);
    moving_section(&mut s, settings, records);
    notes(&mut s, results, Part::Moving);
    queries_section(&mut s, settings, records);
    notes(&mut s, results, Part::Queries);
    memory_section(&mut s, settings, results);
    notes(&mut s, results, Part::Memory);
    notes(&mut s, results, Part::Resting);
    s
}

/// quadrat's figures of this run as ratios to broccoli's, the fastest
/// peer of build + all pairs: its time over broccoli's in build + all
/// pairs and in moving frames (sequential, on all cores, and as the
/// tutorials' loop; and all cores over one), and its heap over broccoli's;
/// for queries, its throughput over the best peer's. Nothing when
/// broccoli or quadrat was not measured.
fn summary_section(s: &mut String, settings: &Settings, results: &Results) {
    let records = &results.records;
    let find = |benchmark: Benchmark, layout, n, name: &str| {
        records.iter().find(|r| {
            r.benchmark == benchmark
                && r.layout == layout
                && r.n == n
                && r.implementation.name() == name
                && !r.extrapolated
        })
    };
    let mut rows = Vec::new();
    let mut row = |what: &str, scene: &str, n: usize, benchmark: Benchmark, layout| {
        let Some(broccoli) = find(benchmark, layout, n, "broccoli") else {
            return;
        };
        let one = find(benchmark, layout, n, "quadrat");
        let par = find(benchmark, layout, n, "quadrat-par");
        let looped = find(benchmark, layout, n, "quadrat-loop");
        if one.is_none() && par.is_none() && looped.is_none() {
            return;
        }
        let over = |r: Option<&Record>, base: Option<&Record>| match (r, base) {
            (Some(r), Some(base)) => ratio(r.millis() / base.millis()),
            _ => "–".to_owned(),
        };
        rows.push(format!(
            "| {what} | {scene} | {} | {} | {} | {} | {} |",
            fmt_n(n),
            over(one, Some(broccoli)),
            over(par, Some(broccoli)),
            over(looped, Some(broccoli)),
            over(par, one),
        ));
    };
    for &layout in &settings.layouts {
        for &n in &settings.ns {
            row(
                "build + all pairs",
                layout.name(),
                n,
                Benchmark::Pairs,
                layout,
            );
        }
    }
    for &layout in &settings.moving_layouts {
        for motion in Motion::ALL {
            for &n in &settings.moving_ns {
                let moving = Benchmark::Moving(motion);
                row(
                    "moving frame",
                    &moving_scene(motion, layout),
                    n,
                    moving,
                    layout,
                );
            }
        }
    }
    let mut queries = Vec::new();
    for kind in QueryKind::ALL {
        let group: Vec<&Record> = records
            .iter()
            .filter(|r| r.benchmark == Benchmark::Queries(kind))
            .collect();
        let rate = |r: &Record| r.queries_per_second().unwrap_or(0.0);
        let ours = group.iter().find(|r| r.implementation.name() == "quadrat");
        if let (Some(ours), Some(best)) = (ours, fastest_peer(&group))
            && rate(best) > 0.0
        {
            queries.push(format!(
                "{} {} ({})",
                kind.name(),
                ratio(rate(ours) / rate(best)),
                best.implementation.name()
            ));
        }
    }
    let name = |r: &&super::memory::MemoryRecord, name: &str| r.implementation.name() == name;
    let memory = results
        .memory
        .iter()
        .find(|r| name(r, "quadrat"))
        .zip(results.memory.iter().find(|r| name(r, "broccoli")));
    if rows.is_empty() && queries.is_empty() && memory.is_none() {
        return;
    }
    s.push_str("\n## quadrat against broccoli\n\n");
    if !rows.is_empty() {
        s.push_str(
            "quadrat's median time over broccoli's (rebuilt each frame in moving frames) in \
             this run: lower is better, and below 1× is faster. **quadrat** builds with \
             `insert_many` and updates with `update_all`; **all cores** with the `par_` forms; \
             **the tutorials' loop** clears, inserts each box and reads both values of every \
             pair with `get`. The last column is all cores' time over one thread's.\n\n\
             | benchmark | scene | n | quadrat | all cores | the tutorials' loop | all cores ÷ one |\n\
             |---|---|---:|---:|---:|---:|---:|\n",
        );
        for r in &rows {
            s.push_str(r);
            s.push('\n');
        }
    }
    if !queries.is_empty() {
        let _ = writeln!(
            s,
            "\nQueries per second, quadrat's over the best peer's (higher is better): {}.",
            queries.join(", ")
        );
    }
    if let Some((ours, theirs)) = memory {
        let _ = writeln!(
            s,
            "\nHeap over {} boxes, quadrat's over broccoli's (lower is better): {} at its \
             peak while building, {} held after.",
            fmt_n(ours.n),
            ratio(ours.usage.peak as f64 / theirs.usage.peak.max(1) as f64),
            ratio(ours.usage.retained as f64 / theirs.usage.retained.max(1) as f64),
        );
    }
}

/// A ratio of two figures, with two decimals: `0.57×`.
fn ratio(x: f64) -> String {
    format!("{x:.2}×")
}

fn memory_section(s: &mut String, settings: &Settings, results: &Results) {
    let records = &results.memory;
    if records.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n## Memory\n\nHeap of each index over {} uniform boxes with a `u32` payload, built from \
         a slice of boxes the way each library documents, counted by the same allocator: the \
         peak while building (input excluded) and what the built index holds. **× broccoli** \
         is the peak over broccoli's.\n",
        fmt_n(settings.query_n)
    );
    let broccoli = records
        .iter()
        .find(|r| r.implementation.name() == "broccoli")
        .map(|r| r.usage.peak);
    s.push_str(
        "| implementation | peak (MB) | retained (MB) | retained bytes per box | × broccoli |\n",
    );
    s.push_str("|---|---:|---:|---:|---:|\n");
    for r in records {
        let name = if r.implementation == Implementation::Quadrat {
            format!("**{}**", r.implementation.name())
        } else {
            r.implementation.name().to_string()
        };
        let _ = writeln!(
            s,
            "| {name} | {:.1} | {:.1} | {:.1} | {} |",
            super::memory::mb(r.usage.peak),
            super::memory::mb(r.usage.retained),
            r.usage.retained as f64 / r.n as f64,
            broccoli.map_or_else(
                || "–".into(),
                |b| format!("{:.2}×", r.usage.peak as f64 / b as f64)
            ),
        );
    }
}

/// The notes on `part`, as a paragraph.
fn notes(s: &mut String, results: &Results, part: Part) {
    let notes: Vec<&str> = results
        .notes
        .iter()
        .filter(|(p, _)| *p == part)
        .map(|(_, n)| n.as_str())
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(s, "\n{}", notes.join(" "));
    }
}

fn pairs_section(s: &mut String, settings: &Settings, records: &[Record]) {
    let pairs: Vec<&Record> = records
        .iter()
        .filter(|r| r.benchmark == Benchmark::Pairs)
        .collect();
    if pairs.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n## Build + all pairs\n\nBuild the index from scratch, then find every intersecting \
         pair; median of up to {} runs (fewer where they add up to more than the time limit), \
         the implementations taking turns, one run each per round. ≈: brute force beyond the {} s limit, extrapolated as n² \
         from the largest n it was measured at.",
        settings.runs,
        settings.limit.as_secs_f64(),
    );
    for &layout in &settings.layouts {
        let rows: Vec<&Record> = pairs
            .iter()
            .copied()
            .filter(|r| r.layout == layout)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            "\n### {}\n\n| n | pairs | implementation | median (ms) | × fastest peer | brute force ÷ |\n\
             |---:|---:|---|---:|---:|---:|",
            layout.name()
        );
        let mut last_n = None;
        for r in &rows {
            let group: Vec<&Record> = rows.iter().copied().filter(|o| o.n == r.n).collect();
            let first = last_n != Some(r.n);
            last_n = Some(r.n);
            let brute = group
                .iter()
                .find(|o| o.implementation == Implementation::Brute);
            let speedup = brute.map_or_else(
                || "–".to_owned(),
                |b| {
                    let mark = if b.extrapolated { "≈" } else { "" };
                    format!("{mark}{}", fmt_ratio(b.millis() / r.millis()))
                },
            );
            let _ = writeln!(
                s,
                "| {} | {} | {} | {}{} | {} | {} |",
                if first { fmt_n(r.n) } else { String::new() },
                if first {
                    fmt_n(r.count as usize)
                } else {
                    String::new()
                },
                name(r),
                if r.extrapolated { "≈" } else { "" },
                fmt_ms(r.millis()),
                vs_fastest_peer(r, &group),
                speedup,
            );
        }
    }
}

/// The scene of a moving frame in the report and the progress lines: the
/// motion, and the layout when it is not the uniform one (the default).
pub(super) fn moving_scene(motion: Motion, layout: Layout) -> String {
    if layout == Layout::Uniform {
        motion.name().to_owned()
    } else {
        format!("{}, {}", motion.name(), layout.name())
    }
}

/// The moving frames' layouts, as the section's first sentence names them:
/// `Uniform layout`, or `Layouts uniform, clustered, mixed`.
fn layouts_named(layouts: &[Layout]) -> String {
    match layouts {
        [one] => {
            let name = one.name();
            let (first, rest) = name.split_at(1);
            format!("{}{rest} layout", first.to_uppercase())
        }
        _ => {
            let names: Vec<&str> = layouts.iter().map(|l| l.name()).collect();
            format!("Layouts {}", names.join(", "))
        }
    }
}

fn moving_section(s: &mut String, settings: &Settings, records: &[Record]) {
    let moving: Vec<&Record> = records
        .iter()
        .filter(|r| matches!(r.benchmark, Benchmark::Moving(_)))
        .collect();
    if moving.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n## Moving frame\n\n{}. Each frame the boxes move ({}; {}), then the index \
         is updated (in place, or rebuilt where the implementation has no update) and every \
         pair is found; median over {} frames after {} warm-up frames (fewer where the frames \
         add up to more than the {} s time limit), the implementations taking turns, one \
         frame each per round{}, in milliseconds per frame.\n\n| motion | n | implementation | update | median (ms) | × fastest peer |\n\
         |---|---:|---|---|---:|---:|",
        layouts_named(&settings.moving_layouts),
        describe(Motion::Drift),
        describe(Motion::Teleport),
        settings.frames,
        settings.warmup,
        settings.limit.as_secs_f64(),
        if settings.pause.is_zero() {
            String::new()
        } else {
            format!(
                ", each frame after {} ms asleep, untimed (`--pause`)",
                settings.pause.as_secs_f64() * 1e3
            )
        },
    );
    for (&layout, motion) in settings
        .moving_layouts
        .iter()
        .flat_map(|l| Motion::ALL.into_iter().map(move |m| (l, m)))
    {
        for &n in &settings.moving_ns {
            let group: Vec<&Record> = moving
                .iter()
                .copied()
                .filter(|r| {
                    r.benchmark == Benchmark::Moving(motion) && r.n == n && r.layout == layout
                })
                .collect();
            let scene = moving_scene(motion, layout);
            for (k, r) in group.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} |",
                    if k == 0 { scene.as_str() } else { "" },
                    if k == 0 { fmt_n(n) } else { String::new() },
                    name(r),
                    if r.implementation.is_incremental() {
                        "in place"
                    } else {
                        "rebuild"
                    },
                    fmt_ms(r.millis()),
                    vs_fastest_peer(r, &group),
                );
            }
        }
    }
}

fn queries_section(s: &mut String, settings: &Settings, records: &[Record]) {
    let queries: Vec<&Record> = records
        .iter()
        .filter(|r| matches!(r.benchmark, Benchmark::Queries(_)))
        .collect();
    let Some(first) = queries.first() else {
        return;
    };
    let _ = writeln!(
        s,
        "\n## Queries\n\n{} queries with centres uniform in the world, against {} boxes of the \
         uniform layout, the index built beforehand. Areas and circles are sized for about 10 \
         hits each. Nearest asks for the {} boxes nearest to a point (Euclidean distance to the \
         box, 0 inside), with their distances; raycast asks for the first box hit, and its \
         distance, by a ray in a random direction reaching as far as the world's diagonal (its \
         hits per query are the rays that hit). Median of up to {} batches, the \
         implementations taking turns, one batch each per round.\n\n\
         | query | implementation | hits per query | queries/s | × fastest peer |\n\
         |---|---|---:|---:|---:|",
        fmt_n(first.queries),
        fmt_n(first.n),
        settings.nearest_k,
        settings.runs,
    );
    for kind in QueryKind::ALL {
        let group: Vec<&Record> = queries
            .iter()
            .copied()
            .filter(|r| r.benchmark == Benchmark::Queries(kind))
            .collect();
        for (k, r) in group.iter().enumerate() {
            let _ = writeln!(
                s,
                "| {} | {} | {:.2} | {} | {} |",
                if k == 0 { kind.name() } else { "" },
                name(r),
                r.count as f64 / r.queries.max(1) as f64,
                fmt_rate(r.queries_per_second().unwrap_or(0.0)),
                vs_fastest_peer(r, &group),
            );
        }
    }
}

fn describe(m: Motion) -> String {
    format!("{}: {}", m.name(), m.describe())
}

/// The implementation's name, in bold for quadrat.
fn name(r: &Record) -> String {
    if r.implementation.is_peer() {
        r.implementation.name().to_owned()
    } else {
        format!("**{}**", r.implementation.name())
    }
}

/// The peer of `group` with the shortest measured time (for queries, the
/// most queries per second: every batch holds as many).
fn fastest_peer<'a>(group: &[&'a Record]) -> Option<&'a Record> {
    group
        .iter()
        .copied()
        .filter(|o| o.implementation.is_peer() && !o.extrapolated)
        .min_by(|a, b| a.millis().total_cmp(&b.millis()))
}

/// `r`'s time over the fastest measured peer's in `group`.
fn vs_fastest_peer(r: &Record, group: &[&Record]) -> String {
    match fastest_peer(group).map(Record::millis) {
        Some(f) if f > 0.0 => {
            let mark = if r.extrapolated { "≈" } else { "" };
            format!("{mark}{}", fmt_ratio(r.millis() / f))
        }
        _ => "–".to_owned(),
    }
}

/// `1234567` → `1,234,567`.
pub(crate) fn fmt_n(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Milliseconds to about three significant digits.
pub(crate) fn fmt_ms(ms: f64) -> String {
    match ms {
        x if x >= 1000.0 => fmt_n(x.round() as usize),
        x if x >= 100.0 => format!("{x:.0}"),
        x if x >= 10.0 => format!("{x:.1}"),
        x if x >= 1.0 => format!("{x:.2}"),
        x => format!("{x:.3}"),
    }
}

/// A ratio: `0.71×`, `6.4×`, `163×`.
pub(crate) fn fmt_ratio(x: f64) -> String {
    match x {
        x if x >= 100.0 => format!("{}×", fmt_n(x.round() as usize)),
        x if x >= 10.0 => format!("{x:.0}×"),
        x if x >= 1.0 => format!("{x:.1}×"),
        x => format!("{x:.2}×"),
    }
}

/// Queries per second, rounded: `1,234,567`.
pub(crate) fn fmt_rate(per_second: f64) -> String {
    fmt_n(per_second.round() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of 1,000 boxes whose median is `ms` (1,000 queries for a
    /// query batch, none otherwise).
    #[cfg(feature = "peers")]
    fn test_record(
        benchmark: Benchmark,
        layout: Layout,
        implementation: Implementation,
        ms: u64,
    ) -> Record {
        Record {
            benchmark,
            layout,
            n: 1_000,
            implementation,
            median: std::time::Duration::from_millis(ms),
            samples: 3,
            extrapolated: false,
            count: 10,
            queries: if matches!(benchmark, Benchmark::Queries(_)) {
                1_000
            } else {
                0
            },
        }
    }

    #[test]
    #[cfg(feature = "peers")]
    fn the_summary_gives_quadrat_against_broccoli() {
        use crate::Results;
        let settings = crate::args::settings_from(&["bench", "--n", "1k", "--moving-n", "1k"]);
        let record = |benchmark, implementation, ms| {
            test_record(benchmark, Layout::Uniform, implementation, ms)
        };
        let drift = Benchmark::Moving(Motion::Drift);
        let area = Benchmark::Queries(QueryKind::Area);
        let results = Results {
            records: vec![
                record(Benchmark::Pairs, Implementation::Broccoli, 20),
                record(Benchmark::Pairs, Implementation::Quadrat, 10),
                record(Benchmark::Pairs, Implementation::QuadratPar, 8),
                record(Benchmark::Pairs, Implementation::QuadratLoop, 15),
                record(drift, Implementation::Broccoli, 40),
                record(drift, Implementation::Quadrat, 30),
                // A query batch in half the time: twice the queries per second.
                record(area, Implementation::Rstar, 100),
                record(area, Implementation::Parry, 80),
                record(area, Implementation::Quadrat, 40),
            ],
            memory: Vec::new(),
            notes: Vec::new(),
        };
        let mut s = String::new();
        summary_section(&mut s, &settings, &results);
        assert!(s.contains("## quadrat against broccoli"), "{s}");
        assert!(
            s.contains("| build + all pairs | uniform | 1,000 | 0.50× | 0.40× | 0.75× | 0.80× |"),
            "{s}"
        );
        assert!(
            s.contains("| moving frame | drift | 1,000 | 0.75× | – | – | – |"),
            "{s}"
        );
        assert!(s.contains("area 2.00× (parry2d)"), "{s}");
        assert!(!s.contains("Heap"), "{s}");
        // Without broccoli there is nothing to compare with.
        let mut s = String::new();
        let without = Results {
            records: results.records[1..4].to_vec(),
            memory: Vec::new(),
            notes: Vec::new(),
        };
        summary_section(&mut s, &settings, &without);
        assert_eq!(s, "");
    }

    /// Moving frames in several layouts: one summary row and one group of
    /// the section per layout, motion and n, the uniform one named as
    /// before and the others after their motion.
    #[test]
    #[cfg(feature = "peers")]
    fn moving_frames_in_several_layouts() {
        use crate::Results;
        let line = [
            "bench",
            "--moving-n",
            "1k",
            "--moving-layouts",
            "mixed,uniform",
        ];
        let settings = crate::args::settings_from(&line);
        assert_eq!(
            settings.moving_layouts,
            [Layout::Uniform, Layout::MixedSizes]
        );
        let record = |layout, implementation, ms| {
            test_record(Benchmark::Moving(Motion::Drift), layout, implementation, ms)
        };
        let results = Results {
            records: vec![
                record(Layout::Uniform, Implementation::Broccoli, 40),
                record(Layout::Uniform, Implementation::Quadrat, 30),
                record(Layout::MixedSizes, Implementation::Broccoli, 50),
                record(Layout::MixedSizes, Implementation::Quadrat, 20),
                record(Layout::MixedSizes, Implementation::QuadratLoop, 25),
            ],
            memory: Vec::new(),
            notes: Vec::new(),
        };
        let mut s = String::new();
        summary_section(&mut s, &settings, &results);
        assert!(
            s.contains("| moving frame | drift | 1,000 | 0.75× | – | – | – |"),
            "{s}"
        );
        assert!(
            s.contains("| moving frame | drift, mixed | 1,000 | 0.40× | – | 0.50× | – |"),
            "{s}"
        );
        let mut s = String::new();
        moving_section(&mut s, &settings, &results.records);
        assert!(s.contains("Layouts uniform, mixed. Each frame"), "{s}");
        assert!(
            s.contains("| drift, mixed | 1,000 | broccoli | rebuild |"),
            "{s}"
        );
        assert_eq!(s.matches("| drift | 1,000 |").count(), 1, "{s}");
        let one = crate::args::settings_from(&["bench", "--moving-n", "1k"]);
        let mut s = String::new();
        moving_section(&mut s, &one, &results.records[..2]);
        assert!(s.contains("Uniform layout. Each frame"), "{s}");
    }

    #[test]
    fn numbers_are_readable() {
        assert_eq!(fmt_n(0), "0");
        assert_eq!(fmt_n(999), "999");
        assert_eq!(fmt_n(1000), "1,000");
        assert_eq!(fmt_n(1_234_567), "1,234,567");
        assert_eq!(fmt_ms(17_219.4), "17,219");
        assert_eq!(fmt_ms(106.2), "106");
        assert_eq!(fmt_ms(6.704), "6.70");
        assert_eq!(fmt_ms(0.1844), "0.184");
        assert_eq!(fmt_ratio(163.4), "163×");
        assert_eq!(fmt_ratio(6.43), "6.4×");
        assert_eq!(fmt_ratio(0.714), "0.71×");
    }
}
