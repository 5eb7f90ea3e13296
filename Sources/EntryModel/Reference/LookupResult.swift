/// The outcome of resolving lenient input against a reference list.
package enum LookupResult<Row: Sendable>: Sendable {
    /// Exactly one row matches.
    case found(Row)
    /// Several rows match equally well (e.g. `朝阳` names 110105 and 211300);
    /// all of them, in list order.
    case ambiguous([Row])
    /// Nothing matches; up to 5 near matches (typos such as `Chna`, `广洲`,
    /// names cut short or abbreviated such as `guangz`, `PRCC`), most likely
    /// first (``NameIndex/nearMatches(_:)``), possibly none.
    case notFound(suggestions: [Row])
    /// Cities only: the input names rows, but none inside the given province;
    /// the rows it names elsewhere (e.g. `杭州` asked for within 广东).
    case wrongParent([Row])
}

extension LookupResult: Equatable where Row: Equatable {}
