//! The table the executor keeps its tasks in and the poller its sockets in: the `slab` crate's (a vector of
//! entries with a list of the vacant ones), each entry's index being its task's or socket's token. Insertion and
//! removal are O(1); [`give_back`] keeps the table sized for what is alive.

pub(crate) use slab::Slab;

/// Gives back the table's tail once most of it is free (a burst of connections has ended), so the table is sized
/// for the entries alive, not for the most there ever were. Cost: nothing while a quarter or more is in use; past
/// that, a look at the last entry, and a walk of the table when a vacant tail was cut (the vacant list is rebuilt).
/// A stale token (a waker of a task that has ended) then finds no entry, or a new one that it tells apart.
pub(crate) fn give_back<T>(table: &mut Slab<T>) {
    if table.capacity() <= 64 || table.len() * 4 >= table.capacity() {
        return;
    }
    table.shrink_to_fit();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mostly_free_table_gives_its_tail_back_and_keeps_live_tokens() {
        let mut table = Slab::new();
        let tokens: Vec<usize> = (0..1000).map(|i| table.insert(i)).collect();
        for &token in &tokens[10..] {
            table.remove(token);
            give_back(&mut table);
        }
        assert!(table.capacity() < 100, "capacity {} after 990 of 1000 left", table.capacity());
        for (i, &token) in tokens[..10].iter().enumerate() {
            assert_eq!(table.get(token), Some(&i));
        }
        // Freed tokens are reused before the table grows.
        let again = table.insert(7);
        assert!(again < 100);
    }

    #[test]
    fn a_busy_table_is_left_as_it_is() {
        let mut table = Slab::new();
        let tokens: Vec<usize> = (0..1000).map(|i| table.insert(i)).collect();
        for &token in &tokens[..500] {
            table.remove(token);
            give_back(&mut table);
        }
        assert!(table.capacity() >= 1000);
    }
}
