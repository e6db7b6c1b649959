//! `quadrat-lab serve --open`: the page's URL goes to the default browser
//! (here a script named by `BROWSER` that writes down what it was given),
//! and a browser that cannot be started is a warning, not an error.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use std::{env, fs};

/// Starts the lab with `serve --port 0 --open` and these variables, and
/// returns it with the URL it printed.
fn start(vars: &[(&str, &str)]) -> (Child, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_quadrat-lab"));
    command
        .args(["serve", "--port", "0", "--open"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in vars {
        command.env(k, v);
    }
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first
        .strip_prefix("quadrat lab: ")
        .unwrap_or_else(|| panic!("no URL: {first}"))
        .to_owned();
    // Read on, so that the lab's further lines have somewhere to go.
    std::thread::spawn(move || lines.for_each(drop));
    (child, url)
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg(unix)]
#[test]
fn open_hands_the_page_to_the_browser() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("serve_open");
    let (script, record) = (dir.join("browser.sh"), dir.join("opened"));
    fs::write(
        &script,
        format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", record.display()),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    let (mut lab, url) = start(&[("BROWSER", script.to_str().unwrap())]);
    let start = Instant::now();
    let opened = loop {
        if let Ok(text) = fs::read_to_string(&record)
            && !text.is_empty()
        {
            break text;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the browser was not started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    lab.kill().unwrap();
    lab.wait().unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert_eq!(opened, url);
}

#[cfg(unix)]
#[test]
fn a_browser_that_cannot_start_is_a_warning() {
    let dir = scratch("serve_open_fails");
    // No browser anywhere: an empty PATH and a BROWSER that does not exist.
    let (mut lab, url) = start(&[
        ("BROWSER", "/nonexistent/browser"),
        ("PATH", dir.to_str().unwrap()),
        ("DISPLAY", ""),
        ("WAYLAND_DISPLAY", ""),
    ]);
    let mut stderr = BufReader::new(lab.stderr.take().unwrap()).lines();
    let warning = stderr.next().unwrap().unwrap();
    assert!(
        warning.starts_with("warning: could not open a browser"),
        "{warning}"
    );
    assert!(warning.contains(&url), "{warning}");
    // The server goes on serving.
    std::thread::sleep(Duration::from_millis(300));
    assert!(lab.try_wait().unwrap().is_none(), "the lab exited");
    lab.kill().unwrap();
    lab.wait().unwrap();
}
