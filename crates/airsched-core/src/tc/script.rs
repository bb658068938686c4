//! The command level of the tc language: a script of `tc qdisc|class|filter ...` lines, as a
//! user runs them in a shell or feeds them to `tc -b` (batch), split into positioned tokens and
//! parsed into [`Command`]s.
//!
//! What follows iproute2 (`tc/tc.c`, `tc_qdisc.c`, `tc_class.c`, `tc_filter.c`, `lib/utils.c`):
//! - a line is a tc command line (`tc ...`, also `/sbin/tc ...` or `sudo tc ...`) or a batch line
//!   (the same without `tc`); both may be mixed;
//! - `#` starts a comment anywhere on a line (as in tc's batch reader); a backslash at the end
//!   of a line continues the command on the next one (tokens keep their own line and column);
//!   words may be quoted with `'` or `"`;
//! - objects, verbs and the keywords tc compares with `matches()` may be abbreviated
//!   (`tc q a dev eth0 root pfifo`, `tc filter add ... pref 1`), the others must be whole;
//! - the common arguments (`dev`, `root`, `parent`, `handle`, `classid`, `estimator`, `stab`,
//!   `protocol`, `prio`/`pref`, ...) come before the kind keyword; everything after the kind is
//!   the discipline's (or classifier's) own options, kept as tokens;
//! - handles and class ids are hexadecimal (`1:`, `1:10`, `ffff:`, `root`, `none`).
//!
//! Commands with errors are left out of the [`Script`]; every error has a line, a column and
//! the token it is about.

use super::filter::{parse_filter, parse_protocol, FilterSpec};
use super::lex::{
    err, err_at, matches, parse_c_u32, parse_classid, parse_qdisc_handle, tokenize, warn, warn_at, Cursor, Handle,
    RawCmd, Severity, TcDiag, Tok,
};
use super::virt::{VirtualCmd, VirtualOp};
use crate::qdisc::classify::{ETH_P_ALL, ETH_P_IP};

/// A parsed script: the commands that parsed without error, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Script<'a> {
    pub commands: Vec<Command<'a>>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command<'a> {
    Qdisc(QdiscCmd<'a>),
    Class(ClassCmd<'a>),
    Filter(FilterCmd<'a>),
    /// `ip link`, `iptables -j IMQ`, `modprobe`, `tc qdisc add|del dev D clsact` (see `virt`).
    Virtual(VirtualCmd<'a>),
}

impl Command<'_> {
    /// The script line the command starts on.
    pub fn line(&self) -> u32 {
        match self {
            Command::Qdisc(c) => c.line,
            Command::Class(c) => c.line,
            Command::Filter(c) => c.line,
            Command::Virtual(c) => c.line,
        }
    }
}

/// The verb of a command. `Link` exists for qdiscs only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `add`: create; error if it exists (NLM_F_CREATE | NLM_F_EXCL).
    Add,
    /// `replace`: create, or replace what is there (NLM_F_CREATE | NLM_F_REPLACE).
    Replace,
    /// `change`: modify something that exists (no flags).
    Change,
    /// `del`/`delete`.
    Delete,
    /// `qdisc link`: like change, may graft an existing qdisc (NLM_F_REPLACE).
    Link,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Replace => "replace",
            Op::Change => "change",
            Op::Delete => "delete",
            Op::Link => "link",
        }
    }
}

/// A handle or class id as written and its value (`root` is `Handle::ROOT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandleArg<'a> {
    pub tok: Tok<'a>,
    pub value: Handle,
}

/// `tc qdisc add|replace|change|link|del dev D [root|parent C] [handle H] KIND OPTIONS`.
#[derive(Clone, Debug, PartialEq)]
pub struct QdiscCmd<'a> {
    pub op: Op,
    pub op_tok: Tok<'a>,
    pub dev: Tok<'a>,
    /// `root` (value `Handle::ROOT`) or `parent CLASSID`.
    pub parent: Option<HandleArg<'a>>,
    /// `handle M:` (minor 0); `handle none`/`0:` are left as `None`.
    pub handle: Option<HandleArg<'a>>,
    /// The kind keyword (`htb`); always present except for `del`.
    pub kind: Option<Tok<'a>>,
    /// Everything after the kind keyword.
    pub opts: Vec<Tok<'a>>,
    /// Line and column just past the last token.
    pub end: (u32, u32),
    /// The line the command starts on.
    pub line: u32,
}

/// `tc class add|replace|change|del dev D [root|parent C] classid C KIND OPTIONS`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassCmd<'a> {
    pub op: Op,
    pub op_tok: Tok<'a>,
    pub dev: Tok<'a>,
    pub parent: Option<HandleArg<'a>>,
    /// Always present (tc lets it out, every kernel class operation needs it).
    pub classid: HandleArg<'a>,
    /// Always present except for `del`.
    pub kind: Option<Tok<'a>>,
    pub opts: Vec<Tok<'a>>,
    pub end: (u32, u32),
    pub line: u32,
}

/// `tc filter add|replace|change|del dev D [root|parent C] [protocol P] [prio N] [handle H]
/// KIND OPTIONS`.
#[derive(Clone, Debug, PartialEq)]
pub struct FilterCmd<'a> {
    pub op: Op,
    pub op_tok: Tok<'a>,
    pub dev: Tok<'a>,
    /// `root` (`Handle::ROOT`) or `parent C`; `None` means the root qdisc as well.
    pub parent: Option<HandleArg<'a>>,
    /// `protocol` as an EtherType.
    pub protocol: Option<(Tok<'a>, u16)>,
    /// `prio`/`pref`, 1 to 65535 (0 means "let the kernel choose", stored as `None`).
    pub prio: Option<(Tok<'a>, u32)>,
    /// `handle`, whose meaning depends on the classifier (u32 node id, fw mark).
    pub handle: Option<Tok<'a>>,
    pub kind: Option<Tok<'a>>,
    pub opts: Vec<Tok<'a>>,
    /// The classifier's options, parsed (add, replace, change).
    pub spec: Option<FilterSpec>,
    pub end: (u32, u32),
    pub line: u32,
}

const OBJECTS: &str = "qdisc, class or filter";

/// Global options of tc, in the order tc tries them (prefix matches): name, takes an argument.
const GLOBAL_OPTS: &[(&str, bool)] = &[
    ("-stats", false),
    ("-statistics", false),
    ("-details", false),
    ("-raw", false),
    ("-pretty", false),
    ("-graph", false),
    ("-Version", false),
    ("-iec", false),
    ("-help", false),
    ("-force", false),
    ("-batch", true),
    ("-netns", true),
    ("-Numeric", false),
    ("-names", false),
    ("-nm", false),
    ("-cf", true),
    ("-conf", true),
    ("-color", false),
    ("-timestamp", false),
    ("-tshort", false),
    ("-json", false),
    ("-oneline", false),
    ("-brief", false),
    ("-echo", false),
];

/// Parse a tc script. Never panics; commands with errors are left out of the script and every
/// problem is a [`TcDiag`] with its line, column and token.
pub fn parse_script(text: &str) -> (Script<'_>, Vec<TcDiag>) {
    let mut diags = Vec::new();
    let mut script = Script::default();
    for raw in tokenize(text, &mut diags) {
        let before = diags.iter().filter(|d| d.severity == Severity::Error).count();
        let cmd = parse_command(&raw, &mut diags);
        let after = diags.iter().filter(|d| d.severity == Severity::Error).count();
        if let Some(c) = cmd {
            if after == before {
                script.commands.push(c);
            }
        }
    }
    (script, diags)
}

/// A shell redirection word (`2>/dev/null`, `>`, `&>log`, `2>&1`): whether it is one, and
/// whether its target is the next word.
fn redirection(w: &str) -> Option<bool> {
    let rest = w.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = rest.strip_prefix('&').unwrap_or(rest);
    let target = rest
        .strip_prefix(">>")
        .or_else(|| rest.strip_prefix(">&"))
        .or_else(|| rest.strip_prefix('>'))
        .or_else(|| rest.strip_prefix('<'))?;
    Some(target.is_empty())
}

/// Remove what a shell would have consumed: redirections, and `|| true` after the command.
/// Anything else after `;`, `&&`, `||` or `|` is an error (one command per line).
fn strip_shell<'a>(raw: &RawCmd<'a>, diags: &mut Vec<TcDiag>) -> Option<(Vec<Tok<'a>>, (u32, u32))> {
    // A word ending in `;` is the word and the shell's command separator.
    let mut toks = Vec::with_capacity(raw.toks.len());
    for &t in &raw.toks {
        match t.text.strip_suffix(';') {
            Some(w) if !w.is_empty() => {
                toks.push(Tok { text: w, ..t });
                let col = t.col.saturating_add(w.chars().count() as u32);
                toks.push(Tok { text: &t.text[w.len()..], line: t.line, col });
            }
            _ => toks.push(t),
        }
    }
    let mut out = Vec::with_capacity(toks.len());
    let mut stripped = false;
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        if matches!(t.text, "||" | "&&" | ";" | "|" | "&") {
            let rest: Vec<&str> = toks[i + 1..].iter().map(|t| t.text).collect();
            if t.text == "||" && (rest == ["true"] || rest == [":"]) {
                warn(diags, t, format!("\"|| {}\" is shell syntax; ignored", rest[0]));
                break;
            }
            err(diags, t, format!("\"{}\" is shell syntax: airsched reads one tc command per line", t.text));
            return None;
        }
        if let Some(takes_next) = redirection(t.text) {
            if !stripped {
                warn(diags, t, "shell redirections are not part of the tc command; ignored");
            }
            stripped = true;
            i += if takes_next { 2 } else { 1 };
            continue;
        }
        out.push(t);
        i += 1;
    }
    let end = match (out.last(), stripped || out.len() < toks.len()) {
        (Some(l), true) => (l.line, l.col.saturating_add(l.text.chars().count() as u32)),
        _ => raw.end,
    };
    Some((out, end))
}

fn parse_command<'a>(raw: &RawCmd<'a>, diags: &mut Vec<TcDiag>) -> Option<Command<'a>> {
    if raw.bad {
        return None;
    }
    let (toks, end) = strip_shell(raw, diags)?;
    let mut c = Cursor::new(&toks, end);
    let first = c.peek()?;
    let line = first.line;
    // `tc`, `/sbin/tc`, `sudo tc`.
    if first.text == "sudo" && c.peek_nth(1).is_some_and(|t| t.text == "tc" || t.text.ends_with("/tc")) {
        c.next();
    }
    if first.text == "sudo" && c.peek_nth(1).is_some_and(|t| super::virt::is_virtual_program(t.text)) {
        c.next();
    }
    if c.peek().is_some_and(|t| super::virt::is_virtual_program(t.text)) {
        return super::virt::parse(&mut c, line, diags).map(Command::Virtual);
    }
    let mut program = false;
    if let Some(t) = c.peek() {
        if t.text == "tc" || t.text.ends_with("/tc") {
            c.next();
            program = true;
        }
    }
    // Global options.
    while let Some(t) = c.peek() {
        if !t.text.starts_with('-') || t.text.len() < 2 {
            break;
        }
        c.next();
        let word = if t.text.starts_with("--") { &t.text[1..] } else { t.text };
        let word = word.split('=').next().unwrap_or(word);
        match GLOBAL_OPTS.iter().find(|(name, _)| matches(word, name)) {
            Some((name, arg)) => {
                if *arg {
                    c.value(t, "an argument", diags);
                }
                match *name {
                    "-batch" => {
                        err(diags, t, "a batch file cannot be read from inside a script; paste its lines instead")
                    }
                    "-force" => {
                        warn(diags, t, "-force has no effect: airsched always reports every error in the script")
                    }
                    _ => warn(diags, t, format!("the global option {name} only changes how tc prints; ignored")),
                }
            }
            None => err(
                diags,
                t,
                format!(
                    "unknown tc option \"{}\"; tc knows -s, -d, -r, -p, -i, -force, -b, -n, -N, -j, -o, -c, -t",
                    t.text
                ),
            ),
        }
    }
    let Some(obj) = c.next() else {
        let at = first;
        err(diags, at, format!("\"{}\" needs an object: {OBJECTS}", at.text));
        return None;
    };
    let object = ["qdisc", "class", "filter", "chain", "actions", "monitor", "exec", "help"]
        .into_iter()
        .find(|o| matches(obj.text, o));
    match object {
        Some("qdisc") => parse_qdisc(&mut c, line, diags).map(|q| match q.kind {
            // The clsact and ingress hooks are not qdiscs of the tree: they hold the egress and
            // ingress filters.
            Some(k) if k.text == "clsact" || k.text == "ingress" => {
                let op = match (q.op == Op::Delete, k.text == "clsact") {
                    (true, true) => VirtualOp::ClsactDel { dev: q.dev },
                    (false, true) => VirtualOp::ClsactAdd { dev: q.dev },
                    (true, false) => VirtualOp::IngressDel { dev: q.dev },
                    (false, false) => VirtualOp::IngressAdd { dev: q.dev },
                };
                Command::Virtual(VirtualCmd { ops: vec![op], line })
            }
            _ => Command::Qdisc(q),
        }),
        Some("class") => parse_class(&mut c, line, diags).map(Command::Class),
        Some("filter") => parse_filter_cmd(&mut c, line, diags).map(Command::Filter),
        Some("help") => {
            warn(diags, obj, "tc help prints usage; ignored");
            None
        }
        Some(o) => {
            err(diags, obj, format!("tc {o} is not modelled; airsched takes qdisc, class and filter commands"));
            None
        }
        None => {
            let msg = if obj.text.contains('$') || obj.text.contains('=') || obj.text.contains('`') {
                format!(
                    "\"{}\" is shell syntax: airsched reads tc commands, not shell scripts (write variables out)",
                    obj.text
                )
            } else if program {
                format!("unknown tc object \"{}\"; expected {OBJECTS}", obj.text)
            } else {
                format!(
                    "unknown object \"{}\": expected {OBJECTS} (a line is a tc command starting with \"tc\", or a batch line starting with the object)",
                    obj.text
                )
            };
            err(diags, obj, msg);
            None
        }
    }
}

/// The verb after the object, as tc prefix-matches it. `None` after an error or for `show`.
fn parse_verb<'a>(
    c: &mut Cursor<'_, 'a>,
    object: &str,
    verbs: &[(&str, Option<Op>)],
    diags: &mut Vec<TcDiag>,
) -> Option<(Op, Tok<'a>)> {
    let Some(v) = c.next() else {
        warn_at(diags, c.end(), format!("\"tc {object}\" alone lists {object}s; ignored"));
        return None;
    };
    match verbs.iter().find(|(name, _)| matches(v.text, name)) {
        Some((_, Some(op))) => Some((*op, v)),
        Some((name, None)) => {
            warn(diags, v, format!("tc {object} {name} prints; ignored"));
            None
        }
        None => {
            let known: Vec<&str> = verbs.iter().filter(|(_, op)| op.is_some()).map(|(n, _)| *n).collect();
            err(diags, v, format!("unknown {object} command \"{}\"; expected one of: {}", v.text, known.join(", ")));
            None
        }
    }
}

/// `dev NAME`, `root` and `parent ID`, which qdisc, class and filter commands read alike
/// (`parent_what` is what the command's parent may be). `Some(true)` if `t` was one of them,
/// `Some(false)` if not; `None` when its value is missing (the command is dropped).
fn dev_or_parent<'a>(
    c: &mut Cursor<'_, 'a>,
    t: Tok<'a>,
    parent_what: &str,
    dev: &mut Option<Tok<'a>>,
    parent: &mut Option<HandleArg<'a>>,
    ok: &mut bool,
    diags: &mut Vec<TcDiag>,
) -> Option<bool> {
    match t.text {
        "dev" => {
            let v = c.value(t, "an interface name, like wlan0", diags)?;
            if dev.is_some() {
                dup(diags, v, "dev");
                *ok = false;
            }
            *dev = Some(v);
        }
        "root" => {
            if parent.is_some() {
                err(diags, t, "\"root\" is a second parent: the command already names one");
                *ok = false;
            }
            *parent = Some(HandleArg { tok: t, value: Handle::ROOT });
        }
        "parent" => {
            let v = c.value(t, parent_what, diags)?;
            if parent.is_some() {
                dup(diags, v, "parent");
                *ok = false;
            }
            match handle_arg(v, diags, false) {
                Some(h) => *parent = Some(h),
                None => *ok = false,
            }
        }
        _ => return Some(false),
    }
    Some(true)
}

/// The command's `dev`, or an error at its verb: every tc command names its interface.
fn need_dev<'a>(dev: Option<Tok<'a>>, op_tok: Tok<'_>, diags: &mut Vec<TcDiag>) -> Option<Tok<'a>> {
    if dev.is_none() {
        err(diags, op_tok, "missing \"dev NAME\": every tc command names its interface");
    }
    dev
}

fn dup(diags: &mut Vec<TcDiag>, at: Tok<'_>, what: &str) {
    err(diags, at, format!("duplicate \"{what}\": it was already given in this command"));
}

fn handle_arg<'a>(tok: Tok<'a>, diags: &mut Vec<TcDiag>, qdisc_handle: bool) -> Option<HandleArg<'a>> {
    if qdisc_handle {
        match parse_qdisc_handle(tok.text) {
            Ok((h, ignored)) => {
                if ignored {
                    warn(diags, tok, format!("a qdisc handle has no minor number: tc reads \"{}\" as {h}", tok.text));
                }
                Some(HandleArg { tok, value: h })
            }
            Err(e) => {
                err(diags, tok, e);
                None
            }
        }
    } else {
        match parse_classid(tok.text) {
            Ok((h, no_colon)) => {
                if no_colon {
                    warn(
                        diags,
                        tok,
                        format!(
                            "no colon: tc reads \"{}\" as the 32-bit id {h}; write MAJOR:MINOR, like 1:{}",
                            tok.text, tok.text
                        ),
                    );
                }
                Some(HandleArg { tok, value: h })
            }
            Err(e) => {
                err(diags, tok, e);
                None
            }
        }
    }
}

/// `estimator INTERVAL TIME_CONSTANT`: warning, both values consumed.
fn skip_estimator<'a>(c: &mut Cursor<'_, 'a>, key: Tok<'a>, diags: &mut Vec<TcDiag>) {
    if c.value(key, "an interval and a time constant, like 1sec 8sec", diags).is_some() {
        c.value(key, "an interval and a time constant, like 1sec 8sec", diags);
    }
    warn(diags, key, "rate estimators only feed the \"rate\" line of tc -s; not modelled, ignored");
}

/// `stab [mtu N] [tsize N] [mpu N] [overhead N] [linklayer T]`: an error (it changes the packet
/// length every discipline accounts), all its words consumed.
fn skip_stab<'a>(c: &mut Cursor<'_, 'a>, key: Tok<'a>, diags: &mut Vec<TcDiag>) {
    while let Some(t) = c.peek() {
        let known = ["mtu", "tsize", "mpu", "overhead", "linklayer"].iter().any(|k| matches(t.text, k));
        if !known {
            break;
        }
        c.next();
        c.value(t, "a number", diags);
    }
    err(diags, key, "size tables (stab) change the packet length every discipline accounts; not modelled");
}

fn parse_qdisc<'a>(c: &mut Cursor<'_, 'a>, line: u32, diags: &mut Vec<TcDiag>) -> Option<QdiscCmd<'a>> {
    let verbs = [
        ("add", Some(Op::Add)),
        ("change", Some(Op::Change)),
        ("replace", Some(Op::Replace)),
        ("link", Some(Op::Link)),
        ("delete", Some(Op::Delete)),
        ("list", None),
        ("show", None),
        ("lst", None),
        ("help", None),
    ];
    let (op, op_tok) = parse_verb(c, "qdisc", &verbs, diags)?;
    let mut dev: Option<Tok<'a>> = None;
    let mut parent: Option<HandleArg<'a>> = None;
    let mut handle: Option<HandleArg<'a>> = None;
    let mut handle_seen = false;
    let mut kind: Option<Tok<'a>> = None;
    let mut ok = true;
    while let Some(t) = c.next() {
        if dev_or_parent(c, t, "a class id, like 1:10", &mut dev, &mut parent, &mut ok, diags)? {
            continue;
        }
        match t.text {
            "handle" => {
                let v = c.value(t, "a qdisc handle, like 1:", diags)?;
                if handle_seen {
                    dup(diags, v, "handle");
                    ok = false;
                }
                handle_seen = true;
                match handle_arg(v, diags, true) {
                    Some(h) if h.value == Handle::UNSPEC => handle = None,
                    Some(h) => handle = Some(h),
                    None => ok = false,
                }
            }
            "clsact" | "ingress" => {
                // `tc qdisc add|replace|del dev D clsact|ingress`: the egress and ingress hooks,
                // or the ingress hook alone (see `virt`).
                if op == Op::Change || op == Op::Link {
                    err(diags, t, format!("{} has no options to {}; add or delete it", t.text, op.name()));
                    return None;
                }
                if let Some(extra) = c.peek() {
                    err(diags, extra, format!("{} takes no options (\"{}\")", t.text, extra.text));
                    return None;
                }
                // Both live at ffff: (TC_H_INGRESS / TC_H_CLSACT): qdisc_create is handed the
                // parent as the handle, so another handle is ignored (the guest took `handle 1:`).
                if let Some(h) = handle.filter(|h| h.value.major() != 0xFFFF) {
                    warn(diags, h.tok, format!("the kernel ignores the handle: the {} qdisc is ffff:", t.text));
                }
                let dev = need_dev(dev, op_tok, diags)?;
                if !ok {
                    return None;
                }
                return Some(QdiscCmd {
                    op,
                    op_tok,
                    dev,
                    parent: None,
                    handle: None,
                    kind: Some(t),
                    opts: Vec::new(),
                    end: c.end(),
                    line,
                });
            }
            w if matches(w, "estimator") => skip_estimator(c, t, diags),
            w if matches(w, "stab") => {
                skip_stab(c, t, diags);
                ok = false;
            }
            w if matches(w, "ingress_block") || matches(w, "egress_block") => {
                c.value(t, "a block index", diags);
                err(diags, t, "shared filter blocks belong to ingress/clsact qdiscs, which are not modelled");
                ok = false;
            }
            w if matches(w, "help") => warn(diags, t, "\"help\" prints usage; ignored"),
            _ => {
                kind = Some(t);
                break;
            }
        }
    }
    let opts = c.rest().to_vec();
    let dev = need_dev(dev, op_tok, diags)?;
    if kind.is_none() && op != Op::Delete {
        err_at(
            diags,
            c.end(),
            format!("qdisc {} needs a kind after the common arguments, like pfifo, htb or sfq", op.name()),
        );
        return None;
    }
    if op == Op::Delete && parent.is_none() {
        err(
            diags,
            op_tok,
            "qdisc delete needs \"root\" or \"parent CLASSID\" (the kernel answers \"Classid cannot be zero\")",
        );
        return None;
    }
    if !ok {
        return None;
    }
    Some(QdiscCmd { op, op_tok, dev, parent, handle, kind, opts, end: c.end(), line })
}

fn parse_class<'a>(c: &mut Cursor<'_, 'a>, line: u32, diags: &mut Vec<TcDiag>) -> Option<ClassCmd<'a>> {
    let verbs = [
        ("add", Some(Op::Add)),
        ("change", Some(Op::Change)),
        ("replace", Some(Op::Replace)),
        ("delete", Some(Op::Delete)),
        ("list", None),
        ("show", None),
        ("lst", None),
        ("help", None),
    ];
    let (op, op_tok) = parse_verb(c, "class", &verbs, diags)?;
    let mut dev: Option<Tok<'a>> = None;
    let mut parent: Option<HandleArg<'a>> = None;
    let mut classid: Option<HandleArg<'a>> = None;
    let mut kind: Option<Tok<'a>> = None;
    let mut ok = true;
    while let Some(t) = c.next() {
        if dev_or_parent(c, t, "a class id or qdisc handle, like 1:1 or 1:", &mut dev, &mut parent, &mut ok, diags)? {
            continue;
        }
        match t.text {
            "classid" => {
                let v = c.value(t, "a class id, like 1:10", diags)?;
                if classid.is_some() {
                    dup(diags, v, "classid");
                    ok = false;
                }
                match handle_arg(v, diags, false) {
                    Some(h) if h.value == Handle::ROOT || h.value == Handle::UNSPEC => {
                        err(diags, v, format!("\"{}\" is not a class id; expected MAJOR:MINOR, like 1:10", v.text));
                        ok = false;
                    }
                    Some(h) => classid = Some(h),
                    None => ok = false,
                }
            }
            "handle" => {
                err(
                    diags,
                    t,
                    "classes are named with \"classid\", not \"handle\" (tc: try \"classid\" instead of \"handle\")",
                );
                return None;
            }
            w if matches(w, "estimator") => skip_estimator(c, t, diags),
            w if matches(w, "help") => warn(diags, t, "\"help\" prints usage; ignored"),
            _ => {
                kind = Some(t);
                break;
            }
        }
    }
    let opts = c.rest().to_vec();
    let dev = need_dev(dev, op_tok, diags)?;
    let Some(classid) = classid else {
        if ok {
            err(diags, op_tok, format!("class {} needs \"classid MAJOR:MINOR\", like classid 1:10", op.name()));
        }
        return None;
    };
    if kind.is_none() && op != Op::Delete {
        err_at(
            diags,
            c.end(),
            format!("class {} needs the qdisc kind after the common arguments, like htb or drr", op.name()),
        );
        return None;
    }
    if !ok {
        return None;
    }
    Some(ClassCmd { op, op_tok, dev, parent, classid, kind, opts, end: c.end(), line })
}

fn parse_filter_cmd<'a>(c: &mut Cursor<'_, 'a>, line: u32, diags: &mut Vec<TcDiag>) -> Option<FilterCmd<'a>> {
    let verbs = [
        ("add", Some(Op::Add)),
        ("change", Some(Op::Change)),
        ("replace", Some(Op::Replace)),
        ("delete", Some(Op::Delete)),
        ("get", None),
        ("list", None),
        ("show", None),
        ("lst", None),
        ("help", None),
    ];
    let (op, op_tok) = parse_verb(c, "filter", &verbs, diags)?;
    let mut dev: Option<Tok<'a>> = None;
    let mut parent: Option<HandleArg<'a>> = None;
    let mut protocol: Option<(Tok<'a>, u16)> = None;
    let mut prio: Option<(Tok<'a>, u32)> = None;
    let mut prio_seen = false;
    let mut handle: Option<Tok<'a>> = None;
    let mut kind: Option<Tok<'a>> = None;
    let mut ok = true;
    while let Some(t) = c.next() {
        if dev_or_parent(c, t, "a qdisc handle or class id, like 1: or 1:1", &mut dev, &mut parent, &mut ok, diags)? {
            continue;
        }
        match t.text {
            "egress" => {
                // The clsact egress hook, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS).
                if parent.is_some() {
                    err(diags, t, "\"egress\" is a second parent: the command already names one");
                    ok = false;
                }
                parent = Some(HandleArg { tok: t, value: Handle::CLSACT_EGRESS });
            }
            "ingress" => {
                // The ingress hook, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS).
                if parent.is_some() {
                    err(diags, t, "\"ingress\" is a second parent: the command already names one");
                    ok = false;
                }
                parent = Some(HandleArg { tok: t, value: Handle::CLSACT_INGRESS });
            }
            "handle" => {
                let v = c.value(t, "a filter handle (u32: 800::800, fw: the mark)", diags)?;
                if handle.is_some() {
                    dup(diags, v, "handle");
                    ok = false;
                }
                handle = Some(v);
            }
            w if matches(w, "preference") || matches(w, "priority") => {
                let v = c.value(t, "a priority from 1 to 65535 (lower runs first)", diags)?;
                if prio_seen {
                    dup(diags, v, "priority");
                    ok = false;
                }
                prio_seen = true;
                match parse_c_u32(v.text) {
                    Some(0) => prio = None,
                    Some(n) if n <= 0xFFFF => prio = Some((v, n)),
                    _ => {
                        err(diags, v, format!("invalid priority \"{}\"; expected an integer from 1 to 65535", v.text));
                        ok = false;
                    }
                }
            }
            w if matches(w, "protocol") => {
                let v = c.value(t, "a protocol, like ip or all", diags)?;
                if protocol.is_some() {
                    dup(diags, v, "protocol");
                    ok = false;
                }
                match parse_protocol(v.text) {
                    Some(p) => protocol = Some((v, p)),
                    None => {
                        err(
                            diags,
                            v,
                            format!(
                                "unknown protocol \"{}\"; expected ip, all, ipv6, arp, 802.1q or a number like 0x0800",
                                v.text
                            ),
                        );
                        ok = false;
                    }
                }
            }
            w if matches(w, "chain") => {
                let v = c.value(t, "a chain index", diags)?;
                match parse_c_u32(v.text) {
                    Some(0) => {}
                    Some(_) => {
                        err(diags, v, "filter chains other than 0 (reached with goto actions) are not modelled");
                        ok = false;
                    }
                    None => {
                        err(diags, v, format!("invalid chain index \"{}\"", v.text));
                        ok = false;
                    }
                }
            }
            w if matches(w, "block") => {
                c.value(t, "a block index", diags);
                err(diags, t, "shared filter blocks are not modelled; attach the filter with dev and parent");
                ok = false;
            }
            w if matches(w, "estimator") => skip_estimator(c, t, diags),
            w if matches(w, "help") => warn(diags, t, "\"help\" prints usage; ignored"),
            _ => {
                kind = Some(t);
                break;
            }
        }
    }
    let opts = c.rest().to_vec();
    let dev = need_dev(dev, op_tok, diags)?;
    if handle.is_some() && kind.is_none() {
        err_at(
            diags,
            c.end(),
            "a filter \"handle\" needs the filter kind after it (tc: Must specify filter type when using \"handle\")",
        );
        return None;
    }
    let mut spec = None;
    match (op, kind) {
        (Op::Delete, _) => {
            if prio.is_none() {
                if let Some(at) = protocol.map(|p| p.0).or(handle).or(kind) {
                    err(diags, at, "filter delete without prio removes every filter of the parent and takes no protocol, handle or kind (the kernel: Cannot flush filters with protocol, handle or kind set)");
                    return None;
                }
            }
        }
        (_, None) => {
            err_at(
                diags,
                c.end(),
                format!("filter {} needs a filter kind after the common arguments: u32, fw or matchall", op.name()),
            );
            return None;
        }
        (_, Some(k)) => {
            spec = Some(parse_filter(k, handle, protocol.map_or(ETH_P_ALL, |p| p.1), &opts, c.end(), diags)?);
            if let Some((t, p)) = protocol {
                if p != ETH_P_IP && p != ETH_P_ALL {
                    warn(
                        diags,
                        t,
                        format!("protocol {}: airsched's packets are IPv4, so this filter never matches", t.text),
                    );
                }
            }
        }
    }
    if op == Op::Change && (prio.is_none() || handle.is_none()) {
        err(diags, op_tok, "filter change needs \"prio\" and \"handle\" to find the filter to change");
        return None;
    }
    if !ok {
        return None;
    }
    Some(FilterCmd { op, op_tok, dev, parent, protocol, prio, handle, kind, opts, spec, end: c.end(), line })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(d: &[TcDiag]) -> Vec<&TcDiag> {
        d.iter().filter(|d| d.severity == Severity::Error).collect()
    }

    #[test]
    fn tokens_keep_positions_across_continuations_and_comments() {
        let text = "# header\ntc qdisc add dev eth0 \\\n    root handle 1: htb default 20  # trailing\n\nqdisc del dev eth0 root\n";
        let (s, d) = parse_script(text);
        assert!(errors(&d).is_empty(), "{d:?}");
        assert_eq!(s.commands.len(), 2);
        let Command::Qdisc(q) = &s.commands[0] else { panic!() };
        assert_eq!(q.line, 2);
        assert_eq!((q.dev.text, q.dev.line, q.dev.col), ("eth0", 2, 18));
        let p = q.parent.unwrap();
        assert_eq!((p.tok.line, p.tok.col), (3, 5));
        let k = q.kind.unwrap();
        assert_eq!((k.text, k.line, k.col), ("htb", 3, 20));
        assert_eq!(q.opts.iter().map(|t| t.text).collect::<Vec<_>>(), vec!["default", "20"]);
        assert_eq!(q.end, (3, 34));
        let Command::Qdisc(d2) = &s.commands[1] else { panic!() };
        assert_eq!((d2.op, d2.line), (Op::Delete, 5));
    }

    #[test]
    fn abbreviations_and_global_options() {
        let (s, d) = parse_script("tc -s q a dev eth0 root pfifo limit 10\ntc -d filter add dev eth0 pref 3 proto ip u32 match u32 0 0 flowid 1:1");
        assert_eq!(s.commands.len(), 2, "{d:?}");
        assert_eq!(d.iter().filter(|d| d.severity == Severity::Warning).count(), 2);
        let Command::Filter(f) = &s.commands[1] else { panic!() };
        assert_eq!(f.prio.map(|p| p.1), Some(3));
        assert_eq!(f.protocol.map(|p| p.1), Some(0x0800));
    }

    #[test]
    fn errors_name_line_column_and_token() {
        let (s, d) = parse_script("tc qdisc add dev eth0 root handle 1x: htb\ntc qdisk add dev eth0 root pfifo\ntc qdisc ad dev eth0 root pfifo\ntc qdisc plus dev eth0\n");
        assert!(s.commands.len() == 1, "{s:?}"); // `ad` is a prefix of add
        let e = errors(&d);
        assert_eq!(e.len(), 3, "{d:?}");
        assert_eq!((e[0].line, e[0].col, e[0].token.as_str()), (1, 35, "1x:"));
        assert_eq!((e[1].line, e[1].col, e[1].token.as_str()), (2, 4, "qdisk"));
        assert_eq!((e[2].line, e[2].col, e[2].token.as_str()), (4, 10, "plus"));
    }
}
