<?php

declare(strict_types=1);

use Kiln\Http\StaticFiles;
use Kiln\Site\DocumentRoot;
use Kiln\Site\PathResolver;
use Kiln\Site\Sequential\SequentialRunner;
use Kiln\Site\TierMap;

// Every script of public/ through the sequential tier; KILN_TEST_TIME_LIMIT sets its time limit.
$resolver = new PathResolver(__DIR__ . '/public', '/index.php');
$runner = new SequentialRunner((float) (getenv('KILN_TEST_TIME_LIMIT') ?: 30));

return new DocumentRoot($resolver, new TierMap($runner), new StaticFiles($resolver->root()));
