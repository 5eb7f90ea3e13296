import Foundation

/// The forms a daemon serves, by name, in a fixed order.
package struct FormRegistry: Sendable {
    /// The form used when a call names none (doc/design.md: `registration`).
    package static let defaultFormName = "registration"

    /// Only the built-in `registration` form, read from the copy of
    /// config/forms/registration.conf compiled into the binary.
    package static let builtIn: FormRegistry = {
        do {
            let ini = try IniFile(text: EmbeddedForms.registration, path: "config/forms/registration.conf")
            return FormRegistry(forms: [try FormDefinition(ini: ini)])
        } catch {
            preconditionFailure("the built-in form does not parse (FormsTests checks it): \(error)")
        }
    }()

    /// The forms: the built-in `registration` first unless a file replaces it,
    /// then the files in lexical order of their names.
    package let forms: [FormDefinition]

    private init(forms: [FormDefinition]) {
        self.forms = forms
    }

    /// Reads every `*.conf` file of `directory`, in lexical order of the file
    /// names, one form per file. A file whose form is named `registration`
    /// replaces the built-in form; otherwise the built-in form is kept.
    ///
    /// - Throws: ``FormDefinitionError`` for an unreadable directory or file, a
    ///   malformed file (with its line), or two files defining the same form name.
    package static func load(directory: String) throws -> FormRegistry {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw FormDefinitionError(path: directory, line: 0, message: "cannot read the forms directory")
        }
        var forms: [FormDefinition] = []
        var paths: [String: String] = [:]
        for file in names.filter({ $0.hasSuffix(".conf") }).sorted(by: {
            Array($0.utf8).lexicographicallyPrecedes($1.utf8)
        }) {
            let path = (directory as NSString).appendingPathComponent(file)
            let form: FormDefinition
            do {
                form = try FormDefinition(ini: IniFile(contentsOfFile: path))
            } catch let error as IniError {
                throw FormDefinitionError(error)
            }
            if let other = paths[form.name] {
                throw FormDefinitionError(
                    path: path, line: 0, message: "form '\(form.name)' is also defined in \(other); remove one")
            }
            paths[form.name] = path
            forms.append(form)
        }
        if paths[defaultFormName] == nil { forms.insert(contentsOf: builtIn.forms, at: 0) }
        return FormRegistry(forms: forms)
    }

    /// The form with this name, or `nil`.
    package func form(named name: String) -> FormDefinition? {
        forms.first { $0.name == name }
    }

    /// The form a call asks for: `name`, or ``defaultFormName`` when `nil`.
    /// - Throws: ``EntryError/formNotFound(_:)``.
    package func form(for name: String?) throws -> FormDefinition {
        let name = name ?? FormRegistry.defaultFormName
        guard let form = form(named: name) else { throw EntryError.formNotFound(name) }
        return form
    }
}
