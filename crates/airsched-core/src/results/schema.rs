//! The machinery of the result schema: column types, cells, the `Table` trait, and the macros
//! that declare a table's row struct and its columns from the same lines (`result_table!`), or
//! a table computed from a view of other data (`impl_table!`).

/// The type of a result column, as Python and Parquet see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    Str,
    Float,
    Int,
}

impl ColumnType {
    /// "str", "float" or "int": the names the Python package uses.
    pub fn name(self) -> &'static str {
        match self {
            ColumnType::Str => "str",
            ColumnType::Float => "float",
            ColumnType::Int => "int",
        }
    }
}

/// One column of a result table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    pub ty: ColumnType,
    /// "s", "ms", "Mb/s", "dB" or "B" (bytes); "" for counts, names, labels and shares.
    pub unit: &'static str,
    /// The field's doc comment (one line; several `///` lines are joined).
    pub(super) doc: &'static str,
}

impl Column {
    /// One line saying what the column holds.
    pub fn doc(&self) -> &'static str {
        self.doc.trim()
    }
}

/// The value of one cell, borrowed from its row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell<'a> {
    Str(&'a str),
    Float(f64),
    Int(i64),
    UInt(u64),
}

/// The column type of a Rust value, fixed by its type so that a schema cannot disagree with
/// its struct; a cell is made from a reference to the value (`Cell::from(&value)`).
pub trait CellType {
    const TYPE: ColumnType;
}

macro_rules! cell_types {
    ($($t:ty => $ct:ident;)*) => {$(
        impl CellType for $t {
            const TYPE: ColumnType = ColumnType::$ct;
        }
    )*};
}

cell_types! {
    String => Str;
    &str => Str;
    f64 => Float;
    u64 => Int;
    u32 => Int;
    i32 => Int;
}

impl<'a> From<&'a String> for Cell<'a> {
    fn from(v: &'a String) -> Self {
        Cell::Str(v)
    }
}

// The text outlives the reference to it: a computed `&str` may be a temporary.
impl<'s> From<&&'s str> for Cell<'s> {
    fn from(v: &&'s str) -> Self {
        Cell::Str(v)
    }
}

// Numbers are copied, so the cell does not borrow them.
impl From<&f64> for Cell<'_> {
    fn from(v: &f64) -> Self {
        Cell::Float(*v)
    }
}

impl From<&u64> for Cell<'_> {
    fn from(v: &u64) -> Self {
        Cell::UInt(*v)
    }
}

impl From<&u32> for Cell<'_> {
    fn from(v: &u32) -> Self {
        Cell::UInt(u64::from(*v))
    }
}

impl From<&i32> for Cell<'_> {
    fn from(v: &i32) -> Self {
        Cell::Int(i64::from(*v))
    }
}

/// A result table: its name, its columns, and the cells of one row by column index.
pub trait Table {
    /// The table's key in the results handed to Python ("stations").
    const NAME: &'static str;
    const COLUMNS: &'static [Column];
    /// The cell of column `column` (an index into `COLUMNS`); panics past the last column.
    fn cell(&self, column: usize) -> Cell<'_>;
}

/// Declares a row struct whose fields are the table's columns, in order, each with its doc
/// comment (required: it becomes the column's description) and an optional `#[unit = "..."]`.
/// Fields after `} and {` belong to the struct but are not columns.
macro_rules! result_table {
    (
        $(#[$meta:meta])*
        pub struct $name:ident as $table:literal {
            $(
                $(#[doc = $doc:literal])+
                $(#[unit = $unit:literal])?
                pub $field:ident: $fty:ty,
            )+
        } $(and {
            $(
                $(#[doc = $xdoc:literal])*
                pub $xfield:ident: $xty:ty,
            )+
        })?
    ) => {
        $(#[$meta])*
        pub struct $name {
            $(
                $(#[doc = $doc])+
                pub $field: $fty,
            )+
            $($(
                $(#[doc = $xdoc])*
                pub $xfield: $xty,
            )+)?
        }

        impl_table! {
            impl Table for $name as $table, |row| {
                $(
                    $(#[doc = $doc])+
                    $(#[unit = $unit])?
                    $field: $fty = row.$field,
                )+
            }
        }
    };
}

/// Implements `Table` for a row type from its columns, each `name: type = value` with the row
/// bound to `$row`; the value is borrowed, so a field is read in place.
macro_rules! impl_table {
    (
        impl Table for $ty:ty as $table:literal, |$row:ident| {
            $(
                $(#[doc = $doc:literal])+
                $(#[unit = $unit:literal])?
                $col:ident: $cty:ty = $value:expr,
            )+
        }
    ) => {
        impl Table for $ty {
            const NAME: &'static str = $table;
            const COLUMNS: &'static [Column] = &[$(
                Column {
                    name: stringify!($col),
                    ty: <$cty as CellType>::TYPE,
                    unit: concat!("" $(, $unit)?),
                    doc: concat!($($doc),+),
                },
            )+];

            #[allow(unused_assignments)]
            fn cell(&self, column: usize) -> Cell<'_> {
                let $row = self;
                let mut i = 0;
                $(
                    if column == i {
                        let value: &$cty = &$value;
                        return Cell::from(value);
                    }
                    i += 1;
                )+
                panic!("{} has {} columns, not {}", $table, Self::COLUMNS.len(), column + 1)
            }
        }
    };
}
