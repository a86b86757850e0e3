//! Build-time checks of the arguments a tree gives an action (`action move_to(speed = 2)`)
//! against the action's parameter type.
//!
//! `#[derive(Params)]` describes a parameter struct's fields ([`Params::FIELDS`]); generated
//! trees call [`check_arg`] and [`check_required`] inside `const` items, and panic with the
//! message they return, so a misspelt name, a value of the wrong type or a missing argument is
//! a compile error at the argument (or the action) instead of a leaf that fails at run time.
//! Everything here is a `const fn`: messages are written into a fixed buffer ([`ArgProblem`]).

use super::Arg;
use crate::NoParams;
use crate::params::Lenient;

/// What a parameter accepts, as far as a tree's literal arguments go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    /// A string (`String`, `&str`, `Cow<str>`).
    Str,
    /// An integer of this range (`u8`: 0 to 255).
    Int {
        /// The smallest value.
        min: i128,
        /// The largest value.
        max: i128,
    },
    /// A float; integers are accepted too.
    Float,
    /// `true` or `false`.
    Bool,
    /// `none` or the inner type (`Option<T>`).
    Optional(&'static ArgType),
    /// A list of the inner type (`Vec<T>`, `[T; N]`, sets).
    List(&'static ArgType),
    /// Anything: a type the derive does not know (a nested struct, an enum, an alias), which
    /// its `Deserialize` judges at run time.
    Any,
}

/// One parameter: a field of the parameter struct, under the name serde reads it by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamField {
    /// The name an argument gives (after `#[serde(rename)]` and `rename_all`).
    pub name: &'static str,
    /// Other accepted names (`#[serde(alias)]`).
    pub aliases: &'static [&'static str],
    /// What it accepts.
    pub ty: ArgType,
    /// Whether an argument must give it: not an `Option` and without `#[serde(default)]`.
    pub required: bool,
}

/// A parameter type that describes its fields, so trees' arguments are checked against them when
/// the crate compiles. Derive it with `#[derive(Params)]` next to `Deserialize` and `JsonSchema`:
///
/// ```
/// use agent_runtime::bt::{ArgType, ParamField, Params};
///
/// /// Parameters of a type `#[derive(Params)]` cannot reach (say, of another crate).
/// struct Move;
///
/// impl Params for Move {
///     const FIELDS: &'static [ParamField] = &[ParamField {
///         name: "speed",
///         aliases: &[],
///         ty: ArgType::Int { min: 0, max: 255 },
///         required: true,
///     }];
/// }
/// ```
///
/// The derive reads serde's `rename`, `rename_all`, `alias`, `default`, `skip`/`skip_deserializing`
/// and `flatten`, and the field types it knows (strings, integers with their range, floats,
/// `bool`, `Option`, `Vec` and other lists); a field of any other type accepts any argument,
/// which its `Deserialize` judges at run time. A struct with a flattened field, a tuple struct or
/// an enum accepts every argument name. Implement the trait by hand for a type of another crate.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not describe its fields to behaviour trees",
    label = "this action's parameters are `{Self}`",
    note = "add `#[derive(Params)]` to `{Self}` (next to `Deserialize` and `JsonSchema`): a tree's arguments are checked against its fields when the crate compiles"
)]
pub trait Params {
    /// The fields, in declaration order.
    const FIELDS: &'static [ParamField];
    /// Whether names that are not in [`FIELDS`](Params::FIELDS) are accepted too.
    const OPEN: bool = false;
}

impl Params for NoParams {
    const FIELDS: &'static [ParamField] = &[];
}

impl<P: Params> Params for Lenient<P> {
    const FIELDS: &'static [ParamField] = P::FIELDS;
    // Lenient parameters ignore fields they do not know.
    const OPEN: bool = true;
}

impl Params for serde_json::Value {
    const FIELDS: &'static [ParamField] = &[];
    const OPEN: bool = true;
}

/// What `#[action]` tells build-time checks about its marker: the parameter type, whatever the
/// state (a tree written as an expression does not name its state).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an action",
    label = "a tree's `action` names a function with `#[action]`",
    note = "add `#[action]` to the function"
)]
pub trait ParamsOf {
    /// The action's parameter type.
    type Params: ?Sized;
}

/// The longest message a check writes; longer ones end in `…`.
const CAPACITY: usize = 480;

/// The outcome of a check: empty when the argument fits, else the error message.
#[derive(Clone, Copy)]
pub struct ArgProblem {
    buf: [u8; CAPACITY],
    len: usize,
    full: bool,
}

impl ArgProblem {
    const fn ok() -> Self {
        ArgProblem {
            buf: [0; CAPACITY],
            len: 0,
            full: false,
        }
    }

    /// The message, if the check failed.
    pub const fn message(&self) -> Option<&str> {
        if self.len == 0 {
            return None;
        }
        let (text, _) = self.buf.split_at(self.len);
        match core::str::from_utf8(text) {
            Ok(text) => Some(text),
            Err(_) => Some("invalid action argument"),
        }
    }

    const fn push(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() && !self.full {
            // Whole characters only, keeping three bytes for the ellipsis.
            let width = match bytes[i] {
                b if b < 0x80 => 1,
                b if b >= 0xF0 => 4,
                b if b >= 0xE0 => 3,
                _ => 2,
            };
            if self.len + width + 3 > CAPACITY || i + width > bytes.len() {
                self.full = true;
                let dots = "…".as_bytes();
                let mut d = 0;
                while d < dots.len() {
                    self.buf[self.len] = dots[d];
                    self.len += 1;
                    d += 1;
                }
                return;
            }
            let mut k = 0;
            while k < width {
                self.buf[self.len] = bytes[i + k];
                self.len += 1;
                k += 1;
            }
            i += width;
        }
    }

    const fn push_name(&mut self, name: &str) {
        self.push("`");
        self.push(name);
        self.push("`");
    }

    const fn push_int(&mut self, value: i128) {
        let mut digits = [0u8; 40];
        let mut n = value.unsigned_abs();
        let mut len = 0;
        loop {
            digits[len] = b'0' + (n % 10) as u8;
            len += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        if value < 0 {
            self.push("-");
        }
        while len > 0 {
            len -= 1;
            let (_, rest) = digits.split_at(len);
            let (digit, _) = rest.split_at(1);
            if let Ok(digit) = core::str::from_utf8(digit) {
                self.push(digit);
            }
        }
    }

    const fn push_type(&mut self, ty: &ArgType) {
        match ty {
            ArgType::Str => self.push("a string"),
            ArgType::Int { min, max } => {
                self.push("an integer from ");
                self.push_int(*min);
                self.push(" to ");
                self.push_int(*max);
            }
            ArgType::Float => self.push("a number"),
            ArgType::Bool => self.push("`true` or `false`"),
            ArgType::Optional(inner) => {
                self.push_type(inner);
                self.push(" or `none`");
            }
            ArgType::List(inner) => {
                self.push("a list of ");
                self.push_elements(inner);
            }
            ArgType::Any => self.push("anything"),
        }
    }

    /// The plural of [`push_type`](Self::push_type), for list elements.
    const fn push_elements(&mut self, ty: &ArgType) {
        match ty {
            ArgType::Str => self.push("strings"),
            ArgType::Int { min, max } => {
                self.push("integers from ");
                self.push_int(*min);
                self.push(" to ");
                self.push_int(*max);
            }
            ArgType::Float => self.push("numbers"),
            ArgType::Bool => self.push("booleans"),
            ArgType::List(_) => self.push("lists"),
            ArgType::Optional(_) | ArgType::Any => self.push_type(ty),
        }
    }

    const fn push_value(&mut self, value: &Arg) {
        match value {
            Arg::Str(_) => self.push("a string"),
            Arg::Int(n) => {
                self.push("the integer ");
                self.push_int(*n);
            }
            Arg::Float(_) => self.push("a float"),
            Arg::Bool(_) => self.push("a boolean"),
            Arg::None => self.push("`none`"),
            Arg::List(_) => self.push("a list"),
        }
    }
}

/// How a value fails a type.
enum Mismatch {
    Fits,
    /// The value (or an element of it) is of another kind.
    Kind,
    /// An integer outside the type's range.
    Range,
}

const fn fits(ty: &ArgType, value: &Arg) -> Mismatch {
    match (ty, value) {
        (ArgType::Any, _) => Mismatch::Fits,
        (ArgType::Optional(_), Arg::None) => Mismatch::Fits,
        (ArgType::Optional(inner), _) => fits(inner, value),
        (ArgType::Str, Arg::Str(_)) => Mismatch::Fits,
        (ArgType::Int { min, max }, Arg::Int(n)) => {
            if *n < *min || *n > *max {
                Mismatch::Range
            } else {
                Mismatch::Fits
            }
        }
        (ArgType::Float, Arg::Int(_) | Arg::Float(_)) => Mismatch::Fits,
        (ArgType::Bool, Arg::Bool(_)) => Mismatch::Fits,
        (ArgType::List(inner), Arg::List(items)) => {
            // Lists nest no deeper than the compiler's nesting limit.
            let mut i = 0;
            while i < items.len() {
                match fits(inner, &items[i]) {
                    Mismatch::Fits => {}
                    Mismatch::Range => return Mismatch::Range,
                    Mismatch::Kind => return Mismatch::Kind,
                }
                i += 1;
            }
            Mismatch::Fits
        }
        _ => Mismatch::Kind,
    }
}

const fn takes_list(ty: &ArgType) -> bool {
    match ty {
        ArgType::List(_) => true,
        ArgType::Optional(inner) => takes_list(inner),
        _ => false,
    }
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn answers_to(field: &ParamField, name: &str) -> bool {
    if same(field.name, name) {
        return true;
    }
    let mut i = 0;
    while i < field.aliases.len() {
        if same(field.aliases[i], name) {
            return true;
        }
        i += 1;
    }
    false
}

/// Names longer than this get no did-you-mean (the distance's rows are fixed arrays).
const SUGGEST_LIMIT: usize = 64;

/// Optimal string alignment distance (Damerau: a transposition is one edit), as the compiler's
/// own suggestions use.
const fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() > SUGGEST_LIMIT || b.len() > SUGGEST_LIMIT {
        return usize::MAX;
    }
    let mut before = [0usize; SUGGEST_LIMIT + 1];
    let mut previous = [0usize; SUGGEST_LIMIT + 1];
    let mut current = [0usize; SUGGEST_LIMIT + 1];
    let mut j = 0;
    while j <= b.len() {
        previous[j] = j;
        j += 1;
    }
    let mut i = 1;
    while i <= a.len() {
        current[0] = i;
        let mut j = 1;
        while j <= b.len() {
            let cost = if a[i - 1] == b[j - 1] { 0 } else { 1 };
            let mut best = previous[j] + 1;
            if current[j - 1] + 1 < best {
                best = current[j - 1] + 1;
            }
            if previous[j - 1] + cost < best {
                best = previous[j - 1] + cost;
            }
            if i > 1
                && j > 1
                && a[i - 1] == b[j - 2]
                && a[i - 2] == b[j - 1]
                && before[j - 2] + 1 < best
            {
                best = before[j - 2] + 1;
            }
            current[j] = best;
            j += 1;
        }
        before = previous;
        previous = current;
        i += 1;
    }
    previous[b.len()]
}

/// The field whose name is closest to `name`, if close enough to be a slip.
const fn closest(fields: &[ParamField], name: &str) -> Option<&'static str> {
    let limit = if name.len() / 3 > 1 {
        name.len() / 3
    } else {
        1
    };
    let mut best: Option<&'static str> = None;
    let mut best_distance = limit + 1;
    let mut i = 0;
    while i < fields.len() {
        let d = distance(fields[i].name, name);
        if d < best_distance {
            best_distance = d;
            best = Some(fields[i].name);
        }
        i += 1;
    }
    best
}

/// How many parameter names an unknown-argument message lists.
const LISTED: usize = 8;

/// A parameter type's fields, read once per action leaf: the one place generated checks name
/// [`Params`], so parameters without it are one error, not one per argument.
#[derive(Debug, Clone, Copy)]
pub struct ParamsShape {
    fields: &'static [ParamField],
    open: bool,
}

/// The shape of `P`.
pub const fn shape<P: Params + ?Sized>() -> ParamsShape {
    ParamsShape {
        fields: P::FIELDS,
        open: P::OPEN,
    }
}

/// Checks one argument, `name = value`, of action `action` against `P`'s fields. `at` starts
/// the message (a `.agent` file's `path:line:column: `, empty for macros).
pub const fn check_arg(
    params: ParamsShape,
    at: &str,
    action: &str,
    name: &str,
    value: &Arg,
) -> ArgProblem {
    let mut problem = ArgProblem::ok();
    let fields = params.fields;
    let mut i = 0;
    while i < fields.len() {
        if answers_to(&fields[i], name) {
            match fits(&fields[i].ty, value) {
                Mismatch::Fits => {}
                Mismatch::Kind => {
                    problem.push(at);
                    problem.push("argument ");
                    problem.push_name(name);
                    problem.push(" of ");
                    problem.push_name(action);
                    if takes_list(&fields[i].ty) && matches!(value, Arg::List(_)) {
                        problem.push(" has an element of the wrong type: the parameter takes ");
                    } else {
                        problem.push(" is ");
                        problem.push_value(value);
                        problem.push(", but the parameter takes ");
                    }
                    problem.push_type(&fields[i].ty);
                }
                Mismatch::Range => {
                    problem.push(at);
                    problem.push("argument ");
                    problem.push_name(name);
                    problem.push(" of ");
                    problem.push_name(action);
                    problem.push(" is out of range: the parameter takes ");
                    problem.push_type(&fields[i].ty);
                }
            }
            return problem;
        }
        i += 1;
    }
    if params.open {
        return problem;
    }
    problem.push(at);
    problem.push_name(action);
    problem.push(" has no parameter ");
    problem.push_name(name);
    if let Some(near) = closest(fields, name) {
        problem.push(": did you mean ");
        problem.push_name(near);
        problem.push("?");
    } else if fields.is_empty() {
        problem.push(": it takes no arguments");
    } else {
        problem.push(": its parameters are ");
        let mut i = 0;
        while i < fields.len() && i < LISTED {
            if i > 0 {
                problem.push(", ");
            }
            problem.push_name(fields[i].name);
            i += 1;
        }
        if fields.len() > LISTED {
            problem.push(", …");
        }
    }
    problem
}

/// Checks that the arguments named `given` include every required parameter of `P`.
pub const fn check_required(
    params: ParamsShape,
    at: &str,
    action: &str,
    given: &[&str],
) -> ArgProblem {
    let mut problem = ArgProblem::ok();
    let fields = params.fields;
    // An unknown name is reported by `check_arg`, and is most likely the missing one misspelt.
    let mut g = 0;
    while g < given.len() && !params.open {
        let mut known = false;
        let mut i = 0;
        while i < fields.len() && !known {
            known = answers_to(&fields[i], given[g]);
            i += 1;
        }
        if !known {
            return problem;
        }
        g += 1;
    }
    let mut i = 0;
    while i < fields.len() {
        if fields[i].required {
            let mut found = false;
            let mut j = 0;
            while j < given.len() && !found {
                found = answers_to(&fields[i], given[j]);
                j += 1;
            }
            if !found {
                problem.push(at);
                problem.push("missing argument ");
                problem.push_name(fields[i].name);
                problem.push(" for ");
                problem.push_name(action);
                problem.push(": write `");
                problem.push(fields[i].name);
                problem.push(" = ...` in its parentheses, or make the field an `Option` or `#[serde(default)]`");
                return problem;
            }
        }
        i += 1;
    }
    problem
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Move;

    impl Params for Move {
        const FIELDS: &'static [ParamField] = &[
            ParamField {
                name: "speed",
                aliases: &["velocity"],
                ty: ArgType::Int { min: 0, max: 255 },
                required: true,
            },
            ParamField {
                name: "mode",
                aliases: &[],
                ty: ArgType::Optional(&ArgType::Str),
                required: false,
            },
            ParamField {
                name: "path",
                aliases: &[],
                ty: ArgType::List(&ArgType::Float),
                required: false,
            },
        ];
    }

    fn arg(name: &str, value: Arg) -> Option<String> {
        check_arg(shape::<Move>(), "", "move_to", name, &value)
            .message()
            .map(str::to_string)
    }

    #[test]
    fn fitting_arguments_pass() {
        assert_eq!(arg("speed", Arg::Int(255)), None);
        assert_eq!(arg("velocity", Arg::Int(0)), None);
        assert_eq!(arg("mode", Arg::None), None);
        assert_eq!(arg("mode", Arg::Str("fast")), None);
        assert_eq!(
            arg("path", Arg::List(&[Arg::Int(1), Arg::Float(2.5)])),
            None
        );
        assert!(
            check_required(shape::<Move>(), "", "move_to", &["velocity"])
                .message()
                .is_none()
        );
        // A misspelt name is its own error, not also a missing argument.
        assert!(
            check_required(shape::<Move>(), "", "move_to", &["sped"])
                .message()
                .is_none()
        );
    }

    #[test]
    fn each_mistake_has_its_message() {
        assert_eq!(
            arg("sped", Arg::Int(1)).unwrap(),
            "`move_to` has no parameter `sped`: did you mean `speed`?"
        );
        assert_eq!(
            arg("colour", Arg::Int(1)).unwrap(),
            "`move_to` has no parameter `colour`: its parameters are `speed`, `mode`, `path`"
        );
        assert_eq!(
            arg("speed", Arg::Str("fast")).unwrap(),
            "argument `speed` of `move_to` is a string, but the parameter takes an integer from 0 to 255"
        );
        assert_eq!(
            arg("speed", Arg::Int(-300)).unwrap(),
            "argument `speed` of `move_to` is out of range: the parameter takes an integer from 0 to 255"
        );
        assert_eq!(
            arg("path", Arg::List(&[Arg::Bool(true)])).unwrap(),
            "argument `path` of `move_to` has an element of the wrong type: the parameter takes a list of numbers"
        );
        assert_eq!(
            check_required(shape::<Move>(), "f.agent:1:2: ", "move_to", &["mode"])
                .message()
                .unwrap(),
            "f.agent:1:2: missing argument `speed` for `move_to`: write `speed = ...` in its parentheses, or make the field an `Option` or `#[serde(default)]`"
        );
        assert_eq!(
            check_arg(shape::<NoParams>(), "", "recharge", "x", &Arg::Int(1))
                .message()
                .unwrap(),
            "`recharge` has no parameter `x`: it takes no arguments"
        );
    }

    #[test]
    fn open_parameters_take_any_name_and_long_messages_are_cut() {
        assert!(
            check_arg(shape::<Lenient<Move>>(), "", "m", "other", &Arg::Int(1))
                .message()
                .is_none()
        );
        let long = "é".repeat(400);
        let message = check_arg(shape::<Move>(), "", "m", &long, &Arg::Int(1));
        let message = message.message().unwrap();
        assert!(
            message.ends_with('…') && message.len() <= CAPACITY,
            "{message}"
        );
        assert_eq!(distance("Opne", "Open"), 1);
    }
}
