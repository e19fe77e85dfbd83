//! `ixbench compare`: figures relative to a base, regressions flagged by direction, changed
//! settings listed, and an exit status for CI gates. The "new" run is an edited copy of a real
//! run, so the verdicts are exact.

mod common;

use common::*;

#[test]
fn flags_regressions_and_changed_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    let o = ixbench(&[
        "run",
        "--out",
        base.to_str().unwrap(),
        "--rows",
        "5000",
        "--steps",
        "l.i0,l.x",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let mut run = run_json(&base);
    // the "new" run: half the insert rate, twice the CPU per row, another cache size
    let ips = run["steps"][0]["summary"]["ips"].as_f64().unwrap();
    run["steps"][0]["summary"]["ips"] = (ips / 2.0).into();
    let cpu = run["steps"][0]["summary"]["cpupq"].as_f64().unwrap();
    run["steps"][0]["summary"]["cpupq"] = (cpu * 2.0).into();
    for s in run["target"]["settings"].as_array_mut().unwrap() {
        if s[0] == "cache_size" {
            s[1] = "-1000".into();
        }
    }
    let new = tmp.path().join("new.json");
    std::fs::write(&new, serde_json::to_string(&run).unwrap()).unwrap();

    let o = ixbench(&["compare", base.to_str().unwrap(), new.to_str().unwrap()]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout} {stderr}");
    assert!(
        stdout.contains("changed: cache_size: -262144 -> -1000"),
        "{stdout}"
    );
    let l = stdout
        .lines()
        .find(|l| l.starts_with("l.i0") && l.contains(" ips "))
        .unwrap();
    assert!(l.contains("0.500") && l.ends_with("WORSE"), "{l}");
    let l = stdout
        .lines()
        .find(|l| l.starts_with("l.i0") && l.contains("cpupq"))
        .unwrap();
    assert!(l.contains("2.000") && l.ends_with("WORSE"), "{l}");
    let l = stdout
        .lines()
        .find(|l| l.starts_with("l.x") && l.contains(" ips "))
        .unwrap();
    assert!(l.contains("1.000") && !l.contains("WORSE"), "{l}");
    assert!(
        stdout.contains("2 figure(s) worse by more than 5%"),
        "{stdout}"
    );

    let o = ixbench(&[
        "compare",
        "--fail-on-regression",
        "--format",
        "csv",
        base.to_str().unwrap(),
        new.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3));
    let (stdout, _) = text(&o);
    assert!(stdout.contains("what,metric,base,new,ratio,"), "{stdout}");

    // comparing a run with itself: nothing changed, nothing worse
    let o = ixbench(&[
        "compare",
        "--fail-on-regression",
        base.to_str().unwrap(),
        base.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert!(text(&o).0.contains("0 figure(s) worse"));

    let o = ixbench(&[
        "compare",
        base.to_str().unwrap(),
        tmp.path().join("nope").to_str().unwrap(),
    ]);
    let err = assert_one_line_error(&o);
    assert!(err.contains("nope"), "{err}");
}
