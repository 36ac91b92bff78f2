"""SdpaError: a failed call of the C ABI, as an exception."""


class SdpaError(RuntimeError):
    """A call of sdpa.h returned a status other than SDPA_SUCCESS.

    ``call`` names the function, ``status`` is the sdpa_status_t value,
    ``status_name`` its constant ("SDPA_ERROR_INVALID_ARGUMENT") and
    ``message`` the backend's (or the front loader's) last_error() sentence,
    which names the offending field and value."""

    def __init__(self, call, status, status_name, message):
        self.call, self.status, self.status_name, self.message = (
            call, status, status_name, message)
        super().__init__("%s: %s: %s" % (call, status_name, message))
