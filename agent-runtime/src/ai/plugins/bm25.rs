//! A BM25 index over short texts (Okapi BM25, k1 = 1.2, b = 0.75): an inverted index kept up
//! to date as texts are added, so a recall reads only the postings of the query's terms.

use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The lexical index of one namespace. Documents are numbered in the order they were added.
#[derive(Debug, Clone, Default)]
pub struct Bm25Index {
    /// Term -> (document, term frequency), in document order.
    postings: HashMap<String, Vec<(u32, u32)>>,
    /// Each document's length in terms.
    lengths: Vec<u32>,
    total_length: u64,
}

/// Lowercased runs of letters and digits.
pub(crate) fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
}

impl Bm25Index {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many documents it holds.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// Adds the next document; returns its number.
    pub fn add(&mut self, text: &str) -> u32 {
        let doc = u32::try_from(self.lengths.len()).unwrap_or(u32::MAX);
        let mut counts: HashMap<String, u32> = HashMap::new();
        let mut length = 0u32;
        for term in terms(text) {
            *counts.entry(term).or_default() += 1;
            length += 1;
        }
        for (term, tf) in counts {
            self.postings.entry(term).or_default().push((doc, tf));
        }
        self.lengths.push(length);
        self.total_length += u64::from(length);
        doc
    }

    /// The `k` best documents for `query` with their scores, best first (ties: lower number
    /// first). Documents sharing no term with the query are not returned.
    pub fn search(&self, query: &str, k: usize) -> Vec<(u32, f64)> {
        if self.is_empty() || k == 0 {
            return Vec::new();
        }
        let n = self.lengths.len() as f64;
        let average = (self.total_length as f64 / n).max(1.0);
        let mut query_terms: Vec<String> = terms(query).collect();
        query_terms.sort();
        query_terms.dedup();
        let mut scores: HashMap<u32, f64> = HashMap::new();
        for term in &query_terms {
            let Some(postings) = self.postings.get(term) else {
                continue;
            };
            let df = postings.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(doc, tf) in postings {
                let tf = f64::from(tf);
                let length = f64::from(self.lengths[doc as usize]);
                let score = idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / average));
                *scores.entry(doc).or_default() += score;
            }
        }
        let mut ranked: Vec<(u32, f64)> = scores.into_iter().collect();
        let by_score = |a: &(u32, f64), b: &(u32, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if ranked.len() > k {
            ranked.select_nth_unstable_by(k - 1, by_score);
            ranked.truncate(k);
        }
        ranked.sort_by(by_score);
        ranked
    }
}
