// HTTPFields is the type of the public API's header fields: importing the module gives it.
@_exported import HTTPTypes
