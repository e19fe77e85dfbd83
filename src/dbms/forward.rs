//! Forwarding that cannot drift: a DBMS made of other DBMSs (a Galera cluster answers as its
//! entry node) gets every method of [`super::Admin`] and [`super::IndexLab`] forwarded by
//! [`AnswersAs`], from the traits' own declarations. Each of those traits is declared inside
//! [`forwarded_trait!`], which writes the trait as given and, beside it, an implementation for
//! every [`AnswersAs`] type whose every method calls the same method of
//! [`AnswersAs::answers_as`]: a method added to the trait later is forwarded with it, and none
//! can be left to its default by mistake (tests/dbms_api.rs checks the traits are declared so).

use super::{Dbms, Driver};

/// A DBMS that answers every question of [`super::Admin`] and [`super::IndexLab`] as another
/// DBMS does (a cluster: its entry node, which may change). It writes only its [`Driver`].
pub trait AnswersAs: Driver {
    /// The DBMS that answers now.
    fn answers_as(&self) -> &dyn Dbms;
}

/// Declare a capability trait (every method takes `&self` and named parameters, returns a
/// value and has a default body; `self` is matched as an identifier so the bodies, written by
/// the caller, can use it) and implement it for every [`AnswersAs`] type by forwarding
/// each method (see the module's doc).
macro_rules! forwarded_trait {
    (
        $(#[$tm:meta])*
        pub trait $tr:ident: $sup:ident {
            $(
                $(#[$m:meta])*
                fn $f:ident(&$s:ident $(, $a:ident: $t:ty)* $(,)?) -> $r:ty $body:block
            )*
        }
    ) => {
        $(#[$tm])*
        pub trait $tr: $sup {
            $( $(#[$m])* fn $f(&$s $(, $a: $t)*) -> $r $body )*
        }

        impl<T: $crate::dbms::forward::AnswersAs> $tr for T {
            $(
                fn $f(&$s $(, $a: $t)*) -> $r {
                    $s.answers_as().$f($($a),*)
                }
            )*
        }
    };
}
pub(crate) use forwarded_trait;
