//! Property tests: no input, however broken, makes the parser panic, and every error it
//! reports points into the file, in order.

use super::tests::{EXAMPLE, HT_EXAMPLE};
use super::*;
use proptest::prelude::*;

/// Applies edits (position, operation, character) to `base`, at char boundaries.
fn mutate(base: &str, edits: &[(usize, u8, char)]) -> String {
    let mut s = base.to_string();
    for &(pos, op, c) in edits {
        let mut p = if s.is_empty() { 0 } else { pos % (s.len() + 1) };
        while !s.is_char_boundary(p) {
            p -= 1;
        }
        match op % 3 {
            0 => s.insert(p, c),
            1 if p < s.len() => {
                s.remove(p);
            }
            _ if p < s.len() => {
                s.remove(p);
                s.insert(p, c);
            }
            _ => s.push(c),
        }
    }
    s
}

fn check_errors(text: &str) {
    if let Err(errs) = parse_scenario(text, "fuzz.toml") {
        assert!(!errs.0.is_empty());
        let lines = text.split('\n').count() as u32;
        let mut prev = (0, 0);
        for e in &errs.0 {
            assert!(e.line >= 1 && e.line <= lines, "{e} in {text:?}");
            assert!(e.column >= 1, "{e}");
            assert!((e.line, e.column) >= prev, "unsorted: {errs}");
            prev = (e.line, e.column);
            let _ = e.to_string();
        }
    }
}

proptest! {
    #[test]
    fn arbitrary_strings_never_panic(s in any::<String>()) {
        check_errors(&s);
    }

    #[test]
    fn toml_like_strings_never_panic(s in "[\\[\\]a-z_=\"' .,{}0-9\\n#-]{0,200}") {
        check_errors(&s);
    }

    #[test]
    fn mutations_of_the_example_never_panic(
        edits in prop::collection::vec(
            (any::<usize>(), any::<u8>(), prop::sample::select(vec![
                '[', ']', '"', '\'', '=', '\n', ' ', ',', '.', '-', '0', '1', '9', 'x', 's',
                'm', '{', '}', '#', 'é', '\\', 't',
            ])),
            1..8,
        )
    ) {
        check_errors(&mutate(EXAMPLE, &edits));
    }

    #[test]
    fn mutations_of_the_80211n_example_never_panic(
        edits in prop::collection::vec(
            (any::<usize>(), any::<u8>(), prop::sample::select(vec![
                '[', ']', '"', '=', '\n', ' ', '.', '-', '_', '0', '1', '4', 'n', 'b', 'f', 'x',
            ])),
            1..8,
        )
    ) {
        check_errors(&mutate(HT_EXAMPLE, &edits));
    }

    #[test]
    fn every_value_can_be_replaced(
        line in 0usize..19,
        value in prop::sample::select(vec![
            "1", "-1", "0", "1.5", "true", "\"\"", "\"x\"", "[]", "{}", "[1, \"a\"]",
            "1979-05-27", "\"-1s\"", "\"0s\"", "\"saturate\"", "\"server\"", "\"ap\"",
            "99999999999999999999", "\"5.5Mbps\"", "{ a = 1 }", "[[1]]", "inf", "nan",
        ]),
    ) {
        let text: String = EXAMPLE
            .lines()
            .enumerate()
            .map(|(i, l)| match l.split_once(" = ") {
                Some((k, _)) if i == line => format!("{k} = {value}\n"),
                _ => format!("{l}\n"),
            })
            .collect();
        check_errors(&text);
    }
}
