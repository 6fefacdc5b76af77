//! Hostile input (issue 54): placeholder opening paragraph, replaced by the tests of this slice.
