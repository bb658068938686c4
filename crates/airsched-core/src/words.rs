//! The words of an option: each option enum declares, beside its own definition, the words a
//! scenario file (and the Python binding, and `airsched export`) spells its values with. The
//! scenario language reads them through [`Words::WORDS`]; everyone else writes them with the
//! enum's `name()` and reads them with its `FromStr`. One place per option, so a new value is
//! one line in its model.
//!
//! ```text
//! words!(EifsRule: "estimated" => EifsRule::Estimated, "legacy" => EifsRule::Legacy);
//! ```

/// An option enum's words: every accepted spelling with its value, in the order an error
/// message lists them. A value's first word is its name; later words for the same value are
/// aliases (`"reno"` for NewReno).
pub trait Words: Copy + PartialEq + Sized + 'static {
    const WORDS: &'static [(&'static str, Self)];

    /// The value's name: its first word.
    fn word(self) -> &'static str {
        Self::WORDS.iter().find(|(_, v)| *v == self).map(|(w, _)| *w).expect("every value of an option has a word")
    }

    /// The value `s` spells (ASCII case and surrounding blanks ignored).
    fn from_word(s: &str) -> Option<Self> {
        Self::WORDS.iter().find(|(w, _)| w.eq_ignore_ascii_case(s.trim())).map(|(_, v)| *v)
    }

    /// The accepted words as an error message lists them: `"a" or "b"`.
    fn expected() -> String {
        Self::WORDS.iter().map(|(w, _)| format!("{w:?}")).collect::<Vec<_>>().join(" or ")
    }
}

/// A word that names no value of an option.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown value {word:?}; expected {expected}")]
pub struct UnknownWord {
    pub word: String,
    pub expected: String,
}

/// Declare an option enum's words: implements [`Words`], an inherent `name()` and `FromStr`.
macro_rules! words {
    ($t:ty: $($w:literal => $v:expr),+ $(,)?) => {
        impl $crate::words::Words for $t {
            const WORDS: &'static [(&'static str, $t)] = &[$(($w, $v)),+];
        }
        impl $t {
            /// The value's name, as a scenario file spells it.
            pub fn name(self) -> &'static str {
                <$t as $crate::words::Words>::word(self)
            }
        }
        impl ::std::str::FromStr for $t {
            type Err = $crate::words::UnknownWord;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                <$t as $crate::words::Words>::from_word(s).ok_or_else(|| $crate::words::UnknownWord {
                    word: s.to_string(),
                    expected: <$t as $crate::words::Words>::expected(),
                })
            }
        }
    };
}
pub(crate) use words;

#[cfg(test)]
mod tests {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Cc {
        Cubic,
        NewReno,
    }
    words!(Cc: "cubic" => Cc::Cubic, "newreno" => Cc::NewReno, "reno" => Cc::NewReno);

    #[test]
    fn names_are_first_words_aliases_parse_and_unknown_words_say_what_is_expected() {
        assert_eq!(Cc::NewReno.name(), "newreno");
        assert_eq!(" Reno ".parse::<Cc>(), Ok(Cc::NewReno));
        assert_eq!("CUBIC".parse::<Cc>(), Ok(Cc::Cubic));
        let e = "bbr".parse::<Cc>().unwrap_err();
        assert_eq!(e.to_string(), r#"unknown value "bbr"; expected "cubic" or "newreno" or "reno""#);
    }
}
