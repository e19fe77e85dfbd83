//! Text files a user writes (option and service files, password files, key lists): read as
//! an editor may have saved them, with a UTF-8 byte-order mark and CRLF line ends. `str::lines`
//! and `BufRead::read_line` + trimming already take CRLF; the mark is removed here.

use std::io::BufRead;

/// The UTF-8 byte-order mark some editors (Windows Notepad) put first.
const BOM: &str = "\u{feff}";

/// `text` without a byte-order mark at its start.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// Skip a byte-order mark at the start of `input` (nothing when there is none).
pub fn skip_bom(input: &mut dyn BufRead) -> std::io::Result<()> {
    let bom = BOM.as_bytes();
    let buf = input.fill_buf()?;
    if buf.starts_with(bom) {
        input.consume(bom.len());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_order_mark_goes_and_nothing_else() {
        assert_eq!(without_bom("\u{feff}[client]\r\n"), "[client]\r\n");
        assert_eq!(without_bom("[client]\n"), "[client]\n");
        assert_eq!(without_bom("a\u{feff}"), "a\u{feff}");
        let mut r = std::io::Cursor::new(b"\xEF\xBB\xBF12\r\n13\r\n".to_vec());
        skip_bom(&mut r).unwrap();
        let mut s = String::new();
        std::io::Read::read_to_string(&mut r, &mut s).unwrap();
        assert_eq!(s, "12\r\n13\r\n");
        let mut r = std::io::Cursor::new(b"12\n".to_vec());
        skip_bom(&mut r).unwrap();
        assert_eq!(r.position(), 0);
    }
}
