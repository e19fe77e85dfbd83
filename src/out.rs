//! Printing to stdout that never panics: when stdout is a closed pipe (`ixbench run | head`)
//! the text is dropped and the run goes on, so it still saves its results and stops any server
//! it started (`println!` would panic, and dying of SIGPIPE would skip both). On a terminal the
//! text is printed above the live status line ([`crate::progress`]).

/// Like `println!`, ignoring write errors.
#[macro_export]
macro_rules! outln {
    () => {{
        use std::io::Write as _;
        $crate::progress::suspend(|| {
            let _ = writeln!(std::io::stdout());
        });
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        $crate::progress::suspend(|| {
            let _ = writeln!(std::io::stdout(), "{text}");
        });
    }};
}

/// Like `print!`, ignoring write errors.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        $crate::progress::suspend(|| {
            let _ = write!(std::io::stdout(), "{text}");
            let _ = std::io::stdout().flush();
        });
    }};
}
