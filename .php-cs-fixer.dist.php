<?php

declare(strict_types=1);

$finder = (new PhpCsFixer\Finder())
    ->in([__DIR__ . '/src', __DIR__ . '/tests', __DIR__ . '/bin', __DIR__ . '/examples', __DIR__ . '/bench'])
    ->name('*.php')
    // --dev's fixtures: the report names their lines, and some leak on purpose in the shape a classic script has.
    ->notPath('Fixtures/dev')
    ->append([__DIR__ . '/bin/kiln']);

return (new PhpCsFixer\Config())
    ->setRiskyAllowed(true)
    ->setRules([
        '@PER-CS2.0' => true,
        'declare_strict_types' => true,
        'no_unused_imports' => true,
        'ordered_imports' => true,
    ])
    ->setFinder($finder);
