//! A stack that keeps its first entries inline, so shallow validations never allocate.

/// Entries beyond `N` spill into a heap vector.
pub(crate) struct WorkStack<T: Copy, const N: usize> {
    inline: [Option<T>; N],
    spill: Vec<T>,
    len: usize,
}

impl<T: Copy, const N: usize> WorkStack<T, N> {
    pub(crate) fn new() -> Self {
        WorkStack {
            inline: [None; N],
            spill: Vec::new(),
            len: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn push(&mut self, entry: T) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = Some(entry),
            None => self.spill.push(entry),
        }
        self.len += 1;
    }

    pub(crate) fn pop(&mut self) -> Option<T> {
        self.len = self.len.checked_sub(1)?;
        match self.inline.get_mut(self.len) {
            Some(slot) => slot.take(),
            None => self.spill.pop(),
        }
    }

    pub(crate) fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        if index >= self.len {
            return None;
        }
        match self.inline.get_mut(index) {
            Some(slot) => slot.as_mut(),
            None => self.spill.get_mut(index - N),
        }
    }

    /// Drops every entry above the first `len`.
    pub(crate) fn truncate(&mut self, len: usize) {
        if len < self.len {
            self.spill.truncate(len.saturating_sub(N));
            self.len = len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_as_one_stack_across_the_spill() {
        let mut stack: WorkStack<u32, 2> = WorkStack::new();
        for value in 0..5 {
            stack.push(value);
        }
        if let Some(entry) = stack.get_mut(1) {
            *entry = 10;
        }
        if let Some(entry) = stack.get_mut(3) {
            *entry = 30;
        }
        assert_eq!((stack.len(), stack.get_mut(5)), (5, None));
        assert_eq!((stack.pop(), stack.pop()), (Some(4), Some(30)));
        stack.truncate(2);
        stack.push(7);
        let drained: Vec<Option<u32>> = (0..4).map(|_| stack.pop()).collect();
        assert_eq!(drained, [Some(7), Some(10), Some(0), None]);
        stack.push(1);
        stack.push(2);
        stack.push(3);
        stack.truncate(1);
        assert_eq!((stack.pop(), stack.pop()), (Some(1), None));
    }
}
