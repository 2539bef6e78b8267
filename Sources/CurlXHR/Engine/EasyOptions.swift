import CCurlShim

/// Typed `curl_easy_setopt` calls that remember the first failure.
struct EasyOptions {
    let easy: UnsafeMutableRawPointer
    private(set) var failure: String?

    init(_ easy: UnsafeMutableRawPointer) { self.easy = easy }

    mutating func fail(_ text: String) {
        if failure == nil { failure = text }
    }

    /// `option` names what was refused; built only on failure (this runs for every option of
    /// every transfer).
    mutating func check(_ code: CURLcode, _ option: @autoclosure () -> String = "a callback") {
        if code != CURLE_OK {
            fail("libcurl refused \(option()): \(String(cString: curl_easy_strerror(code)))")
        }
    }

    mutating func set(_ option: CURLoption, _ value: Int) {
        check(cxhr_easy_set_long(easy, option, value), "option \(option.rawValue)")
    }

    mutating func set(_ option: CURLoption, offset value: Int64) {
        check(cxhr_easy_set_offset(easy, option, curl_off_t(value)), "option \(option.rawValue)")
    }

    mutating func set(_ option: CURLoption, _ value: String?) {
        // withCString hands over a native string's own bytes; an optional String converted
        // implicitly would be copied first.
        let code = if let value { value.withCString { cxhr_easy_set_string(easy, option, $0) } }
                   else { cxhr_easy_set_string(easy, option, nil) }
        check(code, "option \(option.rawValue)")
    }

    mutating func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) {
        check(cxhr_easy_set_pointer(easy, option, value), "option \(option.rawValue)")
    }

    mutating func set(_ option: CURLoption, slist value: UnsafeMutablePointer<curl_slist>?) {
        check(cxhr_easy_set_slist(easy, option, value), "option \(option.rawValue)")
    }

    /// Sets `option` to a list of `lines`, which `handle` keeps until its next reset.
    mutating func set(_ option: CURLoption, lines: [String], keptBy handle: EasyHandle) {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let longer = curl_slist_append(list, line) else {
                if let list { curl_slist_free_all(list) }
                fail("out of memory building the list of option \(option.rawValue)")
                return
            }
            list = longer
        }
        if let list { handle.optionLists.append(list) }
        set(option, slist: list)
    }

    /// Server authentication: SPNEGO through GSS-API with the tickets in a credential cache
    /// (the engine picks which; an empty user name tells libcurl to use them), a user and
    /// password for their scheme, or none at all.
    mutating func setServerAuthentication(negotiate: Bool, credentials: Credentials?) {
        if negotiate {
            set(CURLOPT_USERNAME, "")
            set(CURLOPT_PASSWORD, "")
            set(CURLOPT_HTTPAUTH, Int(AuthScheme.negotiate.curlMask))
        } else if let credentials {
            set(CURLOPT_USERNAME, credentials.user)
            set(CURLOPT_PASSWORD, credentials.password)
            set(CURLOPT_HTTPAUTH, Int(credentials.scheme.curlMask))
        } else {
            set(CURLOPT_USERNAME, nil)
            set(CURLOPT_PASSWORD, nil)
            set(CURLOPT_HTTPAUTH, Int(cxhr_auth_none))
        }
    }

    mutating func set(share: UnsafeMutableRawPointer) {
        check(cxhr_easy_set_share(easy, share), "the share handle")
    }
}
