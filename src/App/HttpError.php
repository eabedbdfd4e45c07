<?php

declare(strict_types=1);

namespace Kiln\App;

// Deprecated: the old name of HttpErrorException, kept so that apps written against it still load.
// Exceptions are named after the one rule (runtime failures end in "Exception"); use HttpErrorException.
class_alias(HttpErrorException::class, __NAMESPACE__ . '\HttpError');
