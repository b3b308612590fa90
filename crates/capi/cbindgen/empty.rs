//! No items: the header is made of its configured text alone.
