import EntryModel
import EntryProtocol
import EntryLedger
import Foundation

/// The CPU cost of validating one Add in process: the built-in registration
/// form, the bench's fixture values as a client sends them (already
/// canonical, as picker input is), one thread. Validation runs on the
/// session threads, beside the writer, so this is part of what the Add rows
/// pay per entry on the two shared cores.
enum ValidationCost {
    /// Validates `count` fixture entries.
    /// - Returns: microseconds per entry.
    /// - Throws: ``BenchFailure`` when a fixture entry does not validate.
    static func microsecondsPerEntry(count: Int) throws -> Double {
        guard let form = FormRegistry.builtIn.form(named: FormRegistry.defaultFormName) else {
            throw BenchFailure("no built-in registration form")
        }
        let validator = Validator()
        let inputs = (0..<min(count, 1000)).map(Fixture.fields)
        let t0 = now()
        for i in 0..<count {
            let result = validator.validate(form: form, input: inputs[i % inputs.count], locale: .en)
            guard result.isValid else { throw BenchFailure("fixture entry \(i) invalid: \(result.problems)") }
        }
        return (now() - t0) / Double(count) * 1e6
    }
}
