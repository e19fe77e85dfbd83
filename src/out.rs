//! Printing to stdout that never panics: when stdout is a closed pipe (`ixbench run | head`)
//! the text is dropped and the run goes on, so it still saves its results and stops any server
//! it started (`println!` would panic, and dying of SIGPIPE would skip both).

/// Like `println!`, ignoring write errors.
#[macro_export]
macro_rules! outln {
    () => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout());
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Like `print!`, ignoring write errors.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}
