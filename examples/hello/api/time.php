<?php

declare(strict_types=1);

// Any method: /api/time
return fn() => ['now' => gmdate(DATE_ATOM)];
